/* owb-json.h: writing JSON: every report and export of the engine, the owb tool and the libraries
 * over libowb goes through these two, so escaping is done once. */
#pragma once

#include <owb/owb-api.h>
#include <glib.h>

G_BEGIN_DECLS

/* Appends s (NULL: "") as a JSON string literal: invalid UTF-8 replaced, quotes, backslashes and
 * control characters escaped. */
OWB_API void owb_json_append_string (GString *out, const char *s);
/* Appends v with `digits` significant digits (the C locale's point); JSON has no NaN or infinity,
 * so those are null. */
OWB_API void owb_json_append_number (GString *out, double v, int digits);

G_END_DECLS
