/* owb-json.h: writing JSON: every report and export of the engine, the owb tool and the libraries
 * over libowb goes through these, so escaping, number formatting and the commas between members
 * and items are done once. The output is compact (no spaces or newlines). */
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

/* Starts the next member of an object or item of an array: a comma unless out is empty or ends in
 * '{' or '[' (the container just opened), ':' (a key waiting for its value) or ','. So a writer
 * needs no "first?" flag of its own; out holds only the JSON being written. */
OWB_API void owb_json_append_separator (GString *out);
/* The separator and "key": (key escaped like a string); the value is written next. */
OWB_API void owb_json_append_key (GString *out, const char *key);
/* A member written whole: the separator, "key": and its value. */
OWB_API void owb_json_append_member_string (GString *out, const char *key, const char *value);
/* value NULL is written as null rather than "". */
OWB_API void owb_json_append_member_string_or_null (GString *out, const char *key, const char *value);
OWB_API void owb_json_append_member_int (GString *out, const char *key, gint64 value);
OWB_API void owb_json_append_member_uint (GString *out, const char *key, guint64 value);
OWB_API void owb_json_append_member_number (GString *out, const char *key, double value, int digits);
/* value with `decimals` digits after the point ("%.3f" in the C locale) where a report shows
 * milliseconds or seconds to a fixed resolution; not finite: null. */
OWB_API void owb_json_append_member_fixed (GString *out, const char *key, double value, int decimals);
/* The separator (and "key": unless key is NULL, for an array item), then { or [. */
OWB_API void owb_json_begin_object (GString *out, const char *key);
OWB_API void owb_json_begin_array (GString *out, const char *key);

G_END_DECLS
