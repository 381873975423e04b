/* owb-cli.c: helpers shared by the owb subcommands (errors, options, inputs, printing, JSON). */
#include "owb-cli.h"

#include <owb/owb-quant.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Appends one character of model-supplied text, escaped when a terminal would act on it: C0 and
 * C1 control characters (ESC starts ANSI sequences), DEL, and bytes that are not UTF-8. Returns
 * the number of bytes consumed. */
static gsize
append_escaped_char (GString *s, const char *p)
{
  guchar c = (guchar) *p;
  if (c < 0x20 || c == 0x7f)
    {
      g_string_append_printf (s, "\\x%02x", c);
      return 1;
    }
  if (c < 0x80)
    {
      g_string_append_c (s, (char) c);
      return 1;
    }
  const char *end = p;
  while (*end && end - p < 4)
    end++;
  gunichar ch = g_utf8_get_char_validated (p, end - p);
  if (ch == (gunichar) -1 || ch == (gunichar) -2)
    {
      g_string_append_printf (s, "\\x%02x", c);
      return 1;
    }
  gsize len = g_utf8_next_char (p) - p;
  if ((ch >= 0x80 && ch < 0xa0) || ch == 0x2028 || ch == 0x2029 || (ch >= 0x202a && ch <= 0x202e)
      || (ch >= 0x2066 && ch <= 0x2069))
    g_string_append_printf (s, "\\u%04x", ch); /* C1 controls, line separators, bidi overrides */
  else
    g_string_append_len (s, p, len);
  return len;
}

char *
owb_cli_escape (const char *text)
{
  GString *s = g_string_new (NULL);
  for (const char *p = text ? text : ""; *p;)
    p += append_escaped_char (s, p);
  return g_string_free (s, FALSE);
}

char *
owb_cli_escape_lines (const char *text)
{
  GString *s = g_string_new (NULL);
  for (const char *p = text ? text : ""; *p;)
    {
      if (*p == '\n')
        {
          g_string_append_c (s, '\n');
          p++;
        }
      else
        p += append_escaped_char (s, p);
    }
  return g_string_free (s, FALSE);
}

char *
owb_cli_one_line (const char *message)
{
  GString *s = g_string_new (NULL);
  gboolean pending_sep = FALSE;

  for (const char *p = message; *p;)
    {
      if (*p == '\n' || *p == '\r')
        {
          pending_sep = s->len > 0;
          p++;
          continue;
        }
      if (pending_sep)
        {
          g_string_append (s, "; ");
          pending_sep = FALSE;
        }
      p += append_escaped_char (s, p);
    }
  return g_string_free (s, FALSE);
}

/* Error lines longer than this are cut (a recursive function could name thousands of calls);
 * OWB_VERBOSE=1 prints them whole. */
#define MAX_ERROR_LINE 1024

static char *
cap_line (char *line)
{
  gsize len = strlen (line);
  const char *verbose = g_getenv ("OWB_VERBOSE");
  if (len <= MAX_ERROR_LINE || (verbose && verbose[0] && strcmp (verbose, "0") != 0))
    return line;
  const char *cut = g_utf8_find_prev_char (line, line + MAX_ERROR_LINE);
  gsize keep = cut ? (gsize) (cut - line) : MAX_ERROR_LINE;
  char *capped = g_strdup_printf ("%.*s ... (%" G_GSIZE_FORMAT " more bytes; OWB_VERBOSE=1 prints the whole message)",
                                  (int) keep, line, len - keep);
  g_free (line);
  return capped;
}

void
owb_cli_error (const char *what, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *line = cap_line (owb_cli_one_line (message));

  fflush (stdout);
  /* Engine messages often name the file already. */
  if (what != NULL && *what && strstr (line, what) == NULL)
    fprintf (stderr, "owb: %s: %s\n", what, line);
  else
    fprintf (stderr, "owb: %s\n", line);
}

void
owb_cli_gerror (const char *what, const GError *error)
{
  owb_cli_error (what, "%s", error != NULL ? error->message : "unknown error");
}

int
owb_cli_exit_status (const GError *error)
{
  if (error == NULL)
    return OWB_EXIT_FAILED;
  if (error->domain == OWB_ERROR && error->code == OWB_ERROR_INVALID_ARGUMENT)
    return OWB_EXIT_USAGE;
  if (error->domain == G_OPTION_ERROR)
    return OWB_EXIT_USAGE;
  return OWB_EXIT_FAILED;
}

gboolean
owb_cli_parse (const char *command, const char *parameter, const char *summary, const GOptionEntry *entries,
               int *argc, char ***argv)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameter);
  g_autoptr (GError) error = NULL;
  g_autofree char *prgname = g_strdup_printf ("owb %s", command);

  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, entries, NULL);

  /* --help output says "Usage: owb run [OPTION…] MODEL". */
  g_set_prgname (prgname);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      owb_cli_error (command, "%s (see owb %s --help)", error->message, command);
      return FALSE;
    }
  return TRUE;
}

gboolean
owb_cli_parse_model (const char *command, const char *summary, const GOptionEntry *entries, int *argc, char ***argv,
                     const char **path)
{
  if (!owb_cli_parse (command, "MODEL", summary, entries, argc, argv))
    return FALSE;
  if (*argc != 2)
    {
      owb_cli_error (command, "expected one MODEL argument (see owb %s --help)", command);
      return FALSE;
    }
  *path = (*argv)[1];
  return TRUE;
}

gboolean
owb_cli_parse_size (const char *text, gsize *bytes, GError **error)
{
  char *end = NULL;
  errno = 0;
  guint64 value = g_ascii_strtoull (text, &end, 10);
  guint64 unit = 1;
  if (end && (*end == 'K' || *end == 'k'))
    unit = 1024, end++;
  else if (end && (*end == 'M' || *end == 'm'))
    unit = 1024 * 1024, end++;
  else if (end && (*end == 'G' || *end == 'g'))
    unit = (guint64) 1024 * 1024 * 1024, end++;
  if (end && (*end == 'B' || *end == 'b' || (*end == 'i' && end[1] == 'B')))
    end += *end == 'i' ? 2 : 1;
  if (errno || end == text || !end || *end || text[0] == '-' || value == 0 || value > G_MAXSIZE / unit)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "'%s' is not a size (a positive number of bytes, or with K, M or G)", text);
      return FALSE;
    }
  *bytes = (gsize) (value * unit);
  return TRUE;
}

static const char *const optimize_names[] = { "disabled", "basic", "extended", "layout", "all" };

gboolean
owb_cli_parse_optimize (const char *text, OwbOptimizeLevel *level, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (optimize_names); i++)
    if (g_ascii_strcasecmp (text, optimize_names[i]) == 0 || (text[0] == '0' + (int) i && text[1] == '\0'))
      {
        *level = (OwbOptimizeLevel) i;
        return TRUE;
      }
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
               "unknown optimization level '%s' (use disabled, basic, extended, layout or all)", text);
  return FALSE;
}

const char *
owb_cli_optimize_name (OwbOptimizeLevel level)
{
  if ((guint) level < G_N_ELEMENTS (optimize_names))
    return optimize_names[level];
  return "unknown";
}

gboolean
owb_cli_session_options (OwbSessionOptions *options, const char *providers, int n_threads,
                         const char *optimize, GPtrArray **providers_out, GError **error)
{
  owb_session_options_init (options);
  *providers_out = NULL;
  if (n_threads < 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--threads must be 0 (all cores) or more, not %d",
                   n_threads);
      return FALSE;
    }
  options->n_threads = n_threads;
  if (optimize != NULL && !owb_cli_parse_optimize (optimize, &options->optimize, error))
    return FALSE;
  {
    /* Always explicit, so that every command partitions the same way. */
    GPtrArray *list = owb_providers_new_from_list (providers != NULL ? providers : "cpu", error);
    if (list == NULL)
      return FALSE;
    options->providers = list;
    *providers_out = list;
  }
  return TRUE;
}

GHashTable *
owb_cli_parse_dims (char **dims, GError **error)
{
  g_autoptr (GHashTable) table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (char **d = dims; d != NULL && *d != NULL; d++)
    {
      const char *eq = strchr (*d, '=');
      char *end = NULL;
      gint64 value;

      if (eq == NULL || eq == *d)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--dim '%s' is not NAME=VALUE", *d);
          return NULL;
        }
      errno = 0;
      value = g_ascii_strtoll (eq + 1, &end, 10);
      if (errno != 0 || end == eq + 1 || *end != '\0' || value < 0 || value > G_MAXINT32)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--dim '%s': the value must be a whole number from 0 to %d",
                       *d, G_MAXINT32);
          return NULL;
        }
      g_hash_table_insert (table, g_strndup (*d, eq - *d), g_memdup2 (&value, sizeof value));
    }
  return g_steal_pointer (&table);
}

static int
find_input (OwbSession *session, const char *name)
{
  guint n = owb_session_get_n_inputs (session);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (owb_session_get_input (session, i)->name, name) == 0)
      return (int) i;
  return -1;
}

static char *
input_names (OwbSession *session)
{
  GString *s = g_string_new (NULL);
  guint n = owb_session_get_n_inputs (session);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "", owb_session_get_input (session, i)->name);
  if (n == 0)
    g_string_append (s, "none");
  return g_string_free (s, FALSE);
}

static OwbTensor *
load_input (const OwbValueInfo *info, const char *path, GError **error)
{
  g_autoptr (GError) local = NULL;
  OwbTensor *t = owb_tensor_load_file (path, NULL, &local);

  if (t == NULL)
    {
      /* The engine's messages name the file already. */
      if (strstr (local->message, path))
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_set_error (error, local->domain, local->code, "%s: %s", path, local->message);
      return NULL;
    }
  /* A clearer message than the session's when the wrong file is given. */
  if (info->has_type && info->type.kind == OWB_VALUE_TENSOR && t->kind == OWB_VALUE_TENSOR &&
      info->type.dtype != OWB_TYPE_UNDEFINED && t->dtype != info->type.dtype)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "%s: holds %s values but input '%s' is %s", path,
                   owb_data_type_name (t->dtype), info->name, owb_data_type_name (info->type.dtype));
      owb_tensor_unref (t);
      return NULL;
    }
  return t;
}

GPtrArray *
owb_cli_gather_inputs (OwbSession *session, const char *input_dir, char **named, gboolean random,
                       GHashTable *dims, guint32 seed, gsize random_limit, GError **error)
{
  gsize budget = random_limit;
  guint n = owb_session_get_n_inputs (session);
  g_autoptr (GPtrArray) values = g_ptr_array_new_full (n, (GDestroyNotify) owb_tensor_unref);
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);

  g_ptr_array_set_size (values, n);

  for (char **p = named; p != NULL && *p != NULL; p++)
    {
      const char *eq = strchr (*p, '=');
      g_autofree char *name = NULL;
      int i;

      if (eq == NULL || eq == *p || eq[1] == '\0')
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--input '%s' is not NAME=FILE", *p);
          return NULL;
        }
      name = g_strndup (*p, eq - *p);
      i = find_input (session, name);
      if (i < 0)
        {
          g_autofree char *names = input_names (session);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--input: the model has no input '%s' (its inputs: %s)",
                       name, names);
          return NULL;
        }
      if (values->pdata[i] != NULL)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "--input: input '%s' given twice", name);
          return NULL;
        }
      values->pdata[i] = load_input (owb_session_get_input (session, i), eq + 1, error);
      if (values->pdata[i] == NULL)
        return NULL;
    }

  if (input_dir != NULL)
    {
      if (!g_file_test (input_dir, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: no such directory", input_dir);
          return NULL;
        }
      for (guint k = 0;; k++)
        {
          g_autofree char *pb = g_strdup_printf ("%s/input_%u.pb", input_dir, k);
          g_autofree char *npy = g_strdup_printf ("%s/input_%u.npy", input_dir, k);
          const char *path = g_file_test (pb, G_FILE_TEST_EXISTS) ? pb
                             : g_file_test (npy, G_FILE_TEST_EXISTS) ? npy : NULL;
          if (path == NULL)
            break;
          if (k >= n)
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: the model has only %u input%s to feed", path,
                           n, n == 1 ? "" : "s");
              return NULL;
            }
          if (values->pdata[k] != NULL)
            continue; /* --input NAME=FILE wins over the directory */
          values->pdata[k] = load_input (owb_session_get_input (session, k), path, error);
          if (values->pdata[k] == NULL)
            return NULL;
        }
    }

  for (guint i = 0; i < n; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (session, i);
      if (values->pdata[i] != NULL)
        continue;
      if (!random)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "input '%s' has no value: give --input %s=FILE, --input-dir DIR or --random", info->name,
                       info->name);
          return NULL;
        }
      values->pdata[i] = owb_tensor_new_random_for_input (info, dims, rand, random_limit ? &budget : NULL, error);
      if (values->pdata[i] == NULL)
        return NULL;
    }
  return g_steal_pointer (&values);
}

gboolean
owb_cli_feed_options (OwbCliFeed *feed, const char *command, char **dim_opts, const char *providers,
                      int n_threads, const char *optimize)
{
  g_autoptr (GError) error = NULL;

  feed->dims = owb_cli_parse_dims (dim_opts, &error);
  if (feed->dims == NULL
      /* run, bench and profile optimize fully unless told otherwise, as ONNX Runtime does
       * (ORT_ENABLE_ALL): an unoptimized first benchmark misleads */
      || !owb_cli_session_options (&feed->options, providers, n_threads, optimize ? optimize : "all",
                                   &feed->providers, &error))
    {
      owb_cli_gerror (command, error);
      return FALSE;
    }
  feed->threads_used = n_threads > 0 ? n_threads : (int) g_get_num_processors ();
  return TRUE;
}

int
owb_cli_feed_open (OwbCliFeed *feed, const char *path, const char *input_dir, char **named, gboolean random,
                   guint32 seed)
{
  g_autoptr (GError) error = NULL;
  double t0 = owb_cli_now_ms ();

  feed->model = owb_model_load_file (path, &error);
  if (feed->model == NULL)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }
  /* nothing here reads the model again: the session takes it, so that weights the optimizer
   * replaces are freed during the load (resnet50 at 1 thread peaked at 312 MiB, now 222 MiB) */
  feed->session = owb_session_new_take (g_steal_pointer (&feed->model), &feed->options, &error);
  if (feed->session == NULL)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }
  feed->load_ms = owb_cli_now_ms () - t0;

  feed->inputs = owb_cli_gather_inputs (feed->session, input_dir, named, random, feed->dims, seed,
                                        feed->options.memory_limit, &error);
  if (feed->inputs == NULL)
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  feed->names = g_new0 (const char *, MAX (feed->inputs->len, 1));
  for (guint i = 0; i < feed->inputs->len; i++)
    feed->names[i] = owb_session_get_input (feed->session, i)->name;
  feed->n_outputs = owb_session_get_n_outputs (feed->session);
  feed->outputs = g_new0 (OwbTensor *, MAX (feed->n_outputs, 1));
  return OWB_EXIT_OK;
}

gboolean
owb_cli_feed_run_once (OwbCliFeed *feed, const OwbRunOptions *options, OwbRunStats *stats, double *ms,
                       GError **error)
{
  double start = owb_cli_now_ms ();
  gboolean ok = owb_session_run_with_options (feed->session, options, feed->inputs->len, feed->names,
                                              (OwbTensor *const *) feed->inputs->pdata, feed->n_outputs, NULL,
                                              feed->outputs, stats, error);
  *ms = owb_cli_now_ms () - start;
  for (guint k = 0; k < feed->n_outputs; k++)
    g_clear_pointer (&feed->outputs[k], owb_tensor_unref);
  return ok;
}

void
owb_cli_feed_clear (OwbCliFeed *feed)
{
  if (feed->outputs != NULL)
    for (guint k = 0; k < feed->n_outputs; k++)
      g_clear_pointer (&feed->outputs[k], owb_tensor_unref);
  g_clear_pointer (&feed->outputs, g_free);
  g_clear_pointer (&feed->names, g_free);
  g_clear_pointer (&feed->inputs, g_ptr_array_unref);
  /* the session goes before the model it was made from, as the commands freed them */
  g_clear_pointer (&feed->session, owb_session_free);
  g_clear_pointer (&feed->model, owb_model_unref);
  g_clear_pointer (&feed->providers, g_ptr_array_unref);
  g_clear_pointer (&feed->dims, g_hash_table_unref);
}

char *
owb_cli_tensor_describe (const OwbTensor *tensor)
{
  OwbValueType type;

  if (tensor == NULL)
    return g_strdup ("(none)");
  if (tensor->kind == OWB_VALUE_SEQUENCE || tensor->kind == OWB_VALUE_OPTIONAL)
    {
      guint n = tensor->sequence != NULL ? tensor->sequence->len : 0;
      return g_strdup_printf ("%s<%s> of %u element%s", tensor->kind == OWB_VALUE_SEQUENCE ? "sequence" : "optional",
                              owb_data_type_name (tensor->dtype), n, n == 1 ? "" : "s");
    }
  owb_tensor_get_value_type (tensor, &type);
  return owb_value_type_to_string (&type);
}

static gboolean
has_scalar_values (OwbDataType dtype)
{
  return dtype == OWB_TYPE_BOOL || (owb_data_type_size (dtype) > 0 && dtype != OWB_TYPE_COMPLEX64 &&
                                    dtype != OWB_TYPE_COMPLEX128 && dtype < OWB_TYPE_FLOAT8E4M3FN);
}

static gboolean
is_float_type (OwbDataType dtype)
{
  return dtype == OWB_TYPE_FLOAT || dtype == OWB_TYPE_DOUBLE || dtype == OWB_TYPE_FLOAT16 ||
         dtype == OWB_TYPE_BFLOAT16;
}

static void
append_value (GString *out, const OwbTensor *t, int64_t i)
{
  if (t->dtype == OWB_TYPE_STRING)
    {
      const char *s = ((char *const *) t->data)[i];
      g_autofree char *escaped = g_strescape (s != NULL ? s : "", NULL);
      g_string_append_printf (out, "\"%s\"", escaped);
    }
  else if (t->dtype == OWB_TYPE_BOOL)
    g_string_append (out, owb_tensor_get_int64 (t, i) ? "true" : "false");
  else if (is_float_type (t->dtype))
    g_string_append_printf (out, "%.6g", owb_tensor_get_double (t, i));
  else if (t->dtype == OWB_TYPE_UINT64)
    g_string_append_printf (out, "%" G_GUINT64_FORMAT, (guint64) owb_tensor_get_int64 (t, i));
  else
    g_string_append_printf (out, "%" G_GINT64_FORMAT, (gint64) owb_tensor_get_int64 (t, i));
}

void
owb_cli_tensor_summary (GString *out, const OwbTensor *t, guint max_values)
{
  if (t->kind == OWB_VALUE_SEQUENCE || t->kind == OWB_VALUE_OPTIONAL)
    {
      for (guint i = 0; t->sequence != NULL && i < t->sequence->len; i++)
        {
          const OwbTensor *e = t->sequence->pdata[i];
          g_autofree char *what = owb_cli_tensor_describe (e);
          g_string_append_printf (out, "  [%u] %s\n", i, what);
          if (e != NULL)
            owb_cli_tensor_summary (out, e, max_values);
        }
      return;
    }
  if (t->kind == OWB_VALUE_MAP && t->sequence != NULL && t->sequence->len == 2)
    {
      /* A map holds [keys, values]: print it as key: value pairs. */
      const OwbTensor *keys = t->sequence->pdata[0], *values = t->sequence->pdata[1];
      g_string_append (out, "    {");
      for (int64_t i = 0; i < keys->nelems && i < (int64_t) max_values; i++)
        {
          if (keys->dtype == OWB_TYPE_STRING)
            g_string_append_printf (out, "%s'%s': ", i ? ", " : "", ((char **) keys->data)[i] ? ((char **) keys->data)[i] : "");
          else
            g_string_append_printf (out, "%s%" G_GINT64_FORMAT ": ", i ? ", " : "", owb_tensor_get_int64 (keys, i));
          g_string_append_printf (out, "%.6g", owb_tensor_get_double (values, i));
        }
      g_string_append_printf (out, "%s}\n", keys->nelems > (int64_t) max_values ? ", ..." : "");
      return;
    }
  if (t->nelems == 0)
    {
      g_string_append (out, "    (no elements)\n");
      return;
    }
  if (t->dtype != OWB_TYPE_STRING && !has_scalar_values (t->dtype))
    {
      g_string_append_printf (out, "    (%" G_GINT64_FORMAT " %s values, not shown)\n", (gint64) t->nelems,
                              owb_data_type_name (t->dtype));
      return;
    }
  if (t->dtype != OWB_TYPE_STRING)
    {
      double lo = INFINITY, hi = -INFINITY, sum = 0;
      int64_t n_nan = 0, n_inf = 0, n_finite = 0;
      for (int64_t i = 0; i < t->nelems; i++)
        {
          double v = owb_tensor_get_double (t, i);
          if (isnan (v))
            n_nan++;
          else if (isinf (v))
            n_inf++;
          else
            {
              lo = MIN (lo, v);
              hi = MAX (hi, v);
              sum += v;
              n_finite++;
            }
        }
      if (n_finite > 0)
        g_string_append_printf (out, "    min %.6g  max %.6g  mean %.6g", lo, hi, sum / n_finite);
      else
        g_string_append (out, "    no finite values");
      if (n_nan || n_inf)
        g_string_append_printf (out, "  (%" G_GINT64_FORMAT " NaN, %" G_GINT64_FORMAT " infinite)", (gint64) n_nan,
                                (gint64) n_inf);
      g_string_append_c (out, '\n');
    }
  g_string_append (out, "    [");
  for (int64_t i = 0; i < t->nelems && i < (int64_t) max_values; i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      append_value (out, t, i);
    }
  if (t->nelems > (int64_t) max_values)
    g_string_append_printf (out, ", ... (%" G_GINT64_FORMAT " in all)", (gint64) t->nelems);
  g_string_append (out, "]\n");
}

double
owb_cli_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double
owb_cli_peak_rss_mb (void)
{
  g_autofree char *status = NULL;
  struct rusage usage;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    {
      const char *line = strstr (status, "VmHWM:");
      if (line != NULL)
        return g_ascii_strtod (line + strlen ("VmHWM:"), NULL) / 1024.0;
    }
  if (getrusage (RUSAGE_SELF, &usage) == 0)
    return usage.ru_maxrss / 1024.0; /* kilobytes on Linux */
  return 0;
}

void
owb_json_member_double (GString *out, const char *key, double v)
{
  owb_json_append_member_number (out, key, v, OWB_CLI_JSON_DIGITS);
}

static const char *
kind_name (OwbValueKind kind)
{
  switch (kind)
    {
    case OWB_VALUE_TENSOR: return "tensor";
    case OWB_VALUE_SEQUENCE: return "sequence";
    case OWB_VALUE_OPTIONAL: return "optional";
    case OWB_VALUE_MAP: return "map";
    case OWB_VALUE_SPARSE_TENSOR: return "sparse_tensor";
    default: return "unknown";
    }
}

void
owb_json_value_type (GString *out, const OwbValueType *type, gboolean has_type)
{
  g_autofree char *text = NULL;

  if (!has_type)
    {
      g_string_append (out, "null");
      return;
    }
  text = owb_value_type_to_string (type);
  owb_json_begin_object (out, NULL);
  owb_json_append_member_string (out, "kind", kind_name (type->kind));
  owb_json_append_member_string (out, "dtype", owb_data_type_name (type->dtype));
  owb_json_append_key (out, "shape");
  if (type->rank < 0 || type->kind != OWB_VALUE_TENSOR)
    g_string_append (out, "null");
  else
    {
      g_string_append_c (out, '[');
      for (int d = 0; d < type->rank && d < OWB_MAX_RANK; d++)
        {
          if (d > 0)
            g_string_append_c (out, ',');
          if (owb_dim_is_known (type->dims[d]))
            g_string_append_printf (out, "%" G_GINT64_FORMAT, (gint64) type->dims[d].value);
          else if (type->dims[d].param != NULL)
            owb_json_append_string (out, type->dims[d].param);
          else
            g_string_append (out, "null");
        }
      g_string_append_c (out, ']');
    }
  owb_json_append_member_string (out, "text", text);
  g_string_append_c (out, '}');
}

int
owb_cli_check_outputs (const char *input, const OwbFileIdentity *input_id, const OwbModel *model,
                       OwbOutputFile *outputs, guint n_outputs)
{
  g_autoptr (GError) error = NULL;
  if (owb_output_files_check (input, input_id, model, outputs, n_outputs, &error))
    return OWB_EXIT_OK;
  owb_cli_gerror (NULL, error);
  return owb_cli_exit_status (error);
}

int
owb_cli_load_for_save (const char *path, const char *output, const char *report_json, const char *external,
                       OwbModel **model)
{
  g_autoptr (GError) error = NULL;
  *model = NULL;
  /* Never write over the input: compare the files themselves, not the spellings. */
  g_auto (OwbFileIdentity) input_id = { 0 };
  if (!owb_file_identity_init (&input_id, path, &error))
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }
  g_autofree char *external_path = NULL;
  if (external)
    {
      g_autofree char *dir = g_path_get_dirname (output);
      external_path = g_build_filename (dir, external, NULL);
    }
  OwbOutputFile outputs[] = {
    { "-o", output, { 0 } },
    { "--report-json", report_json, { 0 } },
    { "--external-data", external_path, { 0 } },
  };
  int status = owb_cli_check_outputs (path, &input_id, NULL, outputs, G_N_ELEMENTS (outputs));
  for (guint i = 0; i < G_N_ELEMENTS (outputs); i++)
    owb_file_identity_clear (&outputs[i].identity);
  if (status != OWB_EXIT_OK)
    return status;
  g_autoptr (OwbModel) loaded = owb_model_load_file (path, &error);
  if (!loaded)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }
  status = owb_cli_check_outputs (path, &input_id, loaded, outputs, G_N_ELEMENTS (outputs));
  for (guint i = 0; i < G_N_ELEMENTS (outputs); i++)
    owb_file_identity_clear (&outputs[i].identity);
  if (status == OWB_EXIT_OK)
    *model = g_steal_pointer (&loaded);
  return status;
}

int
owb_cli_save_model (OwbModel *model, const char *output, const char *external)
{
  g_autoptr (GError) error = NULL;
  OwbSaveOptions save = { 0 };
  if (external)
    {
      save.external_threshold = 1024;
      save.external_data_file = external;
    }
  if (!owb_model_save_file (model, output, external ? &save : NULL, &error))
    {
      owb_cli_gerror (output, error);
      return OWB_EXIT_FAILED;
    }
  return OWB_EXIT_OK;
}

gboolean
owb_cli_image_options (const OwbCliImageArgs *args, OwbQuantImageOptions *options, const char *command,
                       const char *dir_option)
{
  owb_quant_image_options_init (options);
  if (!args->dir && (args->size || args->mean || args->std || args->layout || args->bgr))
    {
      owb_cli_error (command, "--image-size, --mean, --std, --layout and --bgr go with %s", dir_option);
      return FALSE;
    }
  if (args->size && (sscanf (args->size, "%dx%d", &options->width, &options->height) != 2
                     || options->width <= 0 || options->height <= 0 || options->width > 16384
                     || options->height > 16384))
    {
      owb_cli_error (command, "--image-size '%s': expected WxH, such as 224x224", args->size);
      return FALSE;
    }
  const char *const channel_opts[2] = { args->mean, args->std };
  float *const channel_values[2] = { options->mean, options->std };
  for (int k = 0; k < 2; k++)
    if (channel_opts[k])
      {
        float v[3];
        int n = sscanf (channel_opts[k], "%f,%f,%f", &v[0], &v[1], &v[2]);
        if (n == 1)
          v[1] = v[2] = v[0];
        if ((n != 1 && n != 3) || (k == 1 && (v[0] <= 0 || v[1] <= 0 || v[2] <= 0)))
          {
            owb_cli_error (command, "--%s '%s': expected three numbers R,G,B (or one)%s", k ? "std" : "mean",
                           channel_opts[k], k ? ", above 0" : "");
            return FALSE;
          }
        memcpy (channel_values[k], v, sizeof v);
      }
  if (args->layout)
    {
      if (g_ascii_strcasecmp (args->layout, "nchw") == 0)
        options->layout = 1;
      else if (g_ascii_strcasecmp (args->layout, "nhwc") == 0)
        options->layout = 2;
      else
        {
          owb_cli_error (command, "--layout '%s': expected nchw or nhwc", args->layout);
          return FALSE;
        }
    }
  options->bgr = args->bgr;
  return TRUE;
}

void
owb_cli_image_args_clear (OwbCliImageArgs *args)
{
  g_clear_pointer (&args->dir, g_free);
  g_clear_pointer (&args->size, g_free);
  g_clear_pointer (&args->mean, g_free);
  g_clear_pointer (&args->std, g_free);
  g_clear_pointer (&args->layout, g_free);
}
