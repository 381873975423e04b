/* owb-check.c: runs ONNX test-layout cases and compares their outputs with the expected ones;
 * parses the conformance skip/tolerance list. Used by `owb check` and tests/conformance. */
#include "owb-check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
owb_check_options_init (OwbCheckOptions *options)
{
  memset (options, 0, sizeof *options);
  options->rtol = 1e-3;
  options->atol = 1e-5;
  options->providers = NULL;
  options->n_threads = 1;
  options->optimize = OWB_OPTIMIZE_DISABLED;
}

/* ---- running a case ---- */

static int
data_set_number (const char *name)
{
  const char *prefix = "test_data_set_";
  char *end = NULL;
  long n;

  if (!g_str_has_prefix (name, prefix))
    return -1;
  n = strtol (name + strlen (prefix), &end, 10);
  if (end == name + strlen (prefix) || *end != '\0' || n < 0 || n > G_MAXINT)
    return -1;
  return (int) n;
}

typedef struct {
  int number;
  char *path;
} DataSet;

static gint
compare_data_sets (gconstpointer a, gconstpointer b)
{
  const DataSet *x = a, *y = b;
  return (x->number > y->number) - (x->number < y->number);
}

static void
data_set_clear (gpointer p)
{
  g_free (((DataSet *) p)->path);
}

static GArray *
find_data_sets (const char *dir)
{
  GArray *sets = g_array_new (FALSE, FALSE, sizeof (DataSet));
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_array_set_clear_func (sets, data_set_clear);
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      DataSet ds;
      ds.number = data_set_number (name);
      if (ds.number < 0)
        continue;
      ds.path = g_build_filename (dir, name, NULL);
      if (!g_file_test (ds.path, G_FILE_TEST_IS_DIR))
        {
          g_free (ds.path);
          continue;
        }
      g_array_append_val (sets, ds);
    }
  g_array_sort (sets, compare_data_sets);
  return sets;
}

/* Loads DIR/PREFIX_K.pb for K = 0, 1, ... until one is missing. */
static GPtrArray *
load_numbered (const char *dir, const char *prefix, GPtrArray *names, GError **error)
{
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);

  for (guint k = 0;; k++)
    {
      g_autofree char *file = g_strdup_printf ("%s_%u.pb", prefix, k);
      g_autofree char *path = g_build_filename (dir, file, NULL);
      g_autoptr (GError) local = NULL;
      char *name = NULL;
      OwbTensor *t;

      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        break;
      t = owb_tensor_load_file (path, &name, &local);
      if (t == NULL)
        {
          g_autofree char *set = g_path_get_basename (dir);
          if (strstr (local->message, path) != NULL)
            g_propagate_error (error, g_steal_pointer (&local));
          else
            g_set_error (error, local->domain, local->code, "%s/%s: %s", set, file, local->message);
          return NULL;
        }
      g_ptr_array_add (tensors, t);
      g_ptr_array_add (names, name != NULL ? name : g_strdup (""));
    }
  return g_steal_pointer (&tensors);
}

/* "what: message", unless the message names `what` already. */
static char *
error_text (const char *what, const GError *error)
{
  if (what == NULL || strstr (error->message, what) != NULL)
    return g_strdup (error->message);
  return g_strdup_printf ("%s: %s", what, error->message);
}

/* The input names to feed: the names stored in the files when each one names a distinct input of
 * the session, else the session's inputs by position (the ONNX test layout). */
static gboolean
feed_names (OwbSession *session, GPtrArray *file_names, const char **names, char **message)
{
  guint n_feed = owb_session_get_n_inputs (session);
  gboolean by_name = file_names->len > 0;

  for (guint k = 0; k < file_names->len && by_name; k++)
    {
      const char *fname = file_names->pdata[k];
      gboolean found = FALSE;
      for (guint i = 0; i < n_feed && !found; i++)
        found = g_strcmp0 (owb_session_get_input (session, i)->name, fname) == 0;
      for (guint j = 0; j < k && found; j++)
        found = g_strcmp0 (file_names->pdata[j], fname) != 0;
      by_name = found;
    }
  if (by_name)
    {
      for (guint k = 0; k < file_names->len; k++)
        names[k] = file_names->pdata[k];
      return TRUE;
    }
  if (file_names->len > n_feed)
    {
      *message = g_strdup_printf ("input_%u.pb is there but the model has %u input%s to feed", n_feed, n_feed,
                                  n_feed == 1 ? "" : "s");
      return FALSE;
    }
  for (guint k = 0; k < file_names->len; k++)
    names[k] = owb_session_get_input (session, k)->name;
  return TRUE;
}

static gboolean
run_data_set (OwbSession *session, const DataSet *ds, gboolean say_set, const OwbCheckOptions *options,
              char **message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) in_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) out_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) inputs = NULL, expected = NULL;
  g_autofree const char **names = NULL;
  g_autofree OwbTensor **outputs = NULL;
  g_autofree char *set = g_path_get_basename (ds->path);
  g_autofree char *prefix = say_set ? g_strdup_printf ("%s: ", set) : g_strdup ("");
  guint n_out = owb_session_get_n_outputs (session);
  gboolean ok = TRUE;

  inputs = load_numbered (ds->path, "input", in_names, &error);
  if (inputs == NULL)
    {
      *message = error_text (NULL, error);
      return FALSE;
    }
  expected = load_numbered (ds->path, "output", out_names, &error);
  if (expected == NULL)
    {
      *message = error_text (NULL, error);
      return FALSE;
    }
  if (expected->len > n_out)
    {
      *message = g_strdup_printf ("%soutput_%u.pb is there but the model has %u output%s", prefix, n_out, n_out,
                                  n_out == 1 ? "" : "s");
      return FALSE;
    }

  names = g_new0 (const char *, MAX (inputs->len, 1));
  if (!feed_names (session, in_names, names, message))
    {
      char *m = g_strconcat (prefix, *message, NULL);
      g_free (*message);
      *message = m;
      return FALSE;
    }

  outputs = g_new0 (OwbTensor *, MAX (n_out, 1));
  if (!owb_session_run (session, inputs->len, names, (OwbTensor *const *) inputs->pdata, n_out, NULL, outputs, NULL,
                        NULL, &error))
    {
      *message = g_strdup_printf ("%s%s", prefix, error->message);
      ok = FALSE;
    }

  for (guint k = 0; ok && k < expected->len; k++)
    {
      g_autofree char *why = NULL;
      if (!owb_tensor_compare (expected->pdata[k], outputs[k], options->rtol, options->atol, NULL, &why))
        {
          *message = g_strdup_printf ("%soutput %u '%s': %s", prefix, k, owb_session_get_output (session, k)->name, why);
          ok = FALSE;
        }
    }

  for (guint k = 0; k < n_out; k++)
    if (outputs[k] != NULL)
      owb_tensor_unref (outputs[k]);
  return ok;
}

static OwbCheckStatus
check_case (const char *dir, const OwbCheckOptions *options, char **message)
{
  OwbCheckOptions defaults;
  g_autofree char *model_path = NULL;
  g_autoptr (GArray) sets = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) model = NULL;
  g_autoptr (OwbSession) session = NULL;
  g_autoptr (GPtrArray) providers = NULL;
  OwbSessionOptions session_options;

  if (options == NULL)
    {
      owb_check_options_init (&defaults);
      options = &defaults;
    }

  model_path = g_build_filename (dir, "model.onnx", NULL);
  if (!g_file_test (model_path, G_FILE_TEST_IS_REGULAR))
    {
      *message = g_strdup_printf ("%s: no such file", model_path);
      goto failed;
    }
  sets = find_data_sets (dir);
  if (sets->len == 0)
    {
      *message = g_strdup ("no test_data_set_N directories to check against");
      return OWB_CHECK_SKIPPED;
    }

  model = owb_model_load_file (model_path, &error);
  if (model == NULL)
    {
      *message = error_text ("model.onnx", error);
      goto failed;
    }

  owb_session_options_init (&session_options);
  session_options.n_threads = options->n_threads;
  session_options.optimize = options->optimize;
  providers = owb_providers_new_from_list (options->providers != NULL ? options->providers : "cpu", &error);
  if (providers == NULL)
    {
      *message = error_text (NULL, error);
      goto failed;
    }
  session_options.providers = providers;
  session = owb_session_new (model, &session_options, &error);
  if (session == NULL)
    {
      *message = error_text ("model.onnx", error);
      goto failed;
    }

  for (guint i = 0; i < sets->len; i++)
    if (!run_data_set (session, &g_array_index (sets, DataSet, i), sets->len > 1, options, message))
      goto failed;
  return OWB_CHECK_PASSED;

failed:
  return OWB_CHECK_FAILED;
}

OwbCheckStatus
owb_check_case (const char *dir, const OwbCheckOptions *options, char **message)
{
  char *why = NULL;
  OwbCheckStatus status = check_case (dir, options, &why);

  if (message != NULL)
    *message = why;
  else
    g_free (why);
  return status;
}

static gint
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

GPtrArray *
owb_check_find_cases (const char *path)
{
  GPtrArray *cases = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *model = g_build_filename (path, "model.onnx", NULL);
  g_autoptr (GDir) dir = NULL;
  const char *name;

  if (g_file_test (model, G_FILE_TEST_EXISTS) || !g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_ptr_array_add (cases, g_strdup (path));
      return cases;
    }
  dir = g_dir_open (path, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      char *sub = g_build_filename (path, name, NULL);
      g_autofree char *sub_model = g_build_filename (sub, "model.onnx", NULL);
      if (g_file_test (sub_model, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (cases, sub);
      else
        g_free (sub);
    }
  if (cases->len == 0)
    g_ptr_array_add (cases, g_strdup (path)); /* reported as a case without model.onnx */
  g_ptr_array_sort (cases, compare_paths);
  return cases;
}

/* ---- the skip/tolerance list ---- */

typedef struct {
  char *pattern;
  GPatternSpec *spec;
  char *reason;
  gboolean is_tolerance;
  gboolean has_rtol, has_atol;
  double rtol, atol;
} SkipEntry;

struct _OwbCheckSkipList {
  GArray *entries; /* of SkipEntry, in file order: the first match wins */
};

static void
skip_entry_clear (gpointer p)
{
  SkipEntry *e = p;
  g_free (e->pattern);
  g_pattern_spec_free (e->spec);
  g_free (e->reason);
}

void
owb_check_skip_list_free (OwbCheckSkipList *list)
{
  if (list == NULL)
    return;
  g_array_unref (list->entries);
  g_free (list);
}

/* Reads "rtol=R" or "atol=A" from the start of *p; TRUE when one was there. */
static gboolean
parse_tolerance_token (const char **p, SkipEntry *e, gboolean *bad)
{
  const char *s = *p;
  gboolean is_rtol = g_str_has_prefix (s, "rtol="), is_atol = g_str_has_prefix (s, "atol=");
  char *end = NULL;
  double v;

  if (!is_rtol && !is_atol)
    return FALSE;
  v = g_ascii_strtod (s + 5, &end);
  if (end == s + 5 || (*end != '\0' && !g_ascii_isspace (*end)) || !isfinite (v) || v < 0)
    {
      *bad = TRUE;
      return FALSE;
    }
  if (is_rtol)
    e->has_rtol = TRUE, e->rtol = v;
  else
    e->has_atol = TRUE, e->atol = v;
  while (g_ascii_isspace (*end))
    end++;
  *p = end;
  return TRUE;
}

OwbCheckSkipList *
owb_check_skip_list_parse (const char *text, const char *path, GError **error)
{
  g_autoptr (OwbCheckSkipList) list = g_new0 (OwbCheckSkipList, 1);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  list->entries = g_array_new (FALSE, TRUE, sizeof (SkipEntry));
  g_array_set_clear_func (list->entries, skip_entry_clear);

  for (guint n = 0; lines[n] != NULL; n++)
    {
      char *line = g_strstrip (lines[n]);
      const char *rest;
      SkipEntry e = { 0 };
      gboolean bad = FALSE;
      gsize len;

      if (*line == '\0' || *line == '#')
        continue;
      len = strcspn (line, " \t");
      rest = line + len;
      while (g_ascii_isspace (*rest))
        rest++;
      e.pattern = g_strndup (line, len);
      while (parse_tolerance_token (&rest, &e, &bad))
        ;
      e.is_tolerance = e.has_rtol || e.has_atol;
      if (bad)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "%s:%u: '%s': a tolerance must be rtol=NUMBER or atol=NUMBER, not negative", path, n + 1,
                       e.pattern);
          g_free (e.pattern);
          return NULL;
        }
      if (*rest == '\0')
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s:%u: '%s' has no reason; every entry needs one",
                       path, n + 1, e.pattern);
          g_free (e.pattern);
          return NULL;
        }
      e.reason = g_strdup (rest);
      e.spec = g_pattern_spec_new (e.pattern);
      g_array_append_val (list->entries, e);
    }
  return g_steal_pointer (&list);
}

OwbCheckSkipList *
owb_check_skip_list_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  return owb_check_skip_list_parse (text, path, error);
}

static const SkipEntry *
skip_list_match (const OwbCheckSkipList *list, const char *name, gboolean tolerance)
{
  if (list == NULL)
    return NULL;
  for (guint i = 0; i < list->entries->len; i++)
    {
      const SkipEntry *e = &g_array_index (list->entries, SkipEntry, i);
      if (e->is_tolerance == tolerance && g_pattern_spec_match_string (e->spec, name))
        return e;
    }
  return NULL;
}

const char *
owb_check_skip_list_get_skip (const OwbCheckSkipList *list, const char *name)
{
  const SkipEntry *e = skip_list_match (list, name, FALSE);
  return e != NULL ? e->reason : NULL;
}

gboolean
owb_check_skip_list_get_tolerance (const OwbCheckSkipList *list, const char *name, double *rtol, double *atol,
                                   const char **reason)
{
  const SkipEntry *e = skip_list_match (list, name, TRUE);

  if (e == NULL)
    return FALSE;
  if (e->has_rtol)
    *rtol = e->rtol;
  if (e->has_atol)
    *atol = e->atol;
  if (reason != NULL)
    *reason = e->reason;
  return TRUE;
}
