/* owb-optimizer.c: runs the passes of the chosen level in order, timing each and collecting its
 * report; levels, pass listing and the JSON form of reports. */
#include "owb-optimizer-private.h"
#include <owb/owb-validate.h>
#include <owb/owb-json.h>

#include <string.h>

static const char *const level_names[] = { "disabled", "basic", "extended", "layout", "all" };

const char *
owb_optimize_level_to_string (OwbOptimizeLevel level)
{
  return level <= OWB_OPTIMIZE_ALL ? level_names[level] : "unknown";
}

gboolean
owb_optimize_level_from_string (const char *name, OwbOptimizeLevel *level)
{
  for (guint i = 0; i < G_N_ELEMENTS (level_names); i++)
    if (name && strcmp (name, level_names[i]) == 0)
      {
        *level = (OwbOptimizeLevel) i;
        return TRUE;
      }
  return FALSE;
}

void
owb_optimize_options_init (OwbOptimizeOptions *options)
{
  memset (options, 0, sizeof *options);
  options->level = OWB_OPTIMIZE_EXTENDED;
}

const OwbPassInfo *
owb_optimize_list_passes (guint *n)
{
  static OwbPassInfo *infos;
  if (g_once_init_enter (&infos))
    {
      OwbPassInfo *list = g_new0 (OwbPassInfo, _owb_n_passes + 1);
      for (guint i = 0; i < _owb_n_passes; i++)
        list[i] = (OwbPassInfo){ _owb_passes[i]->name, _owb_passes[i]->level, _owb_passes[i]->description };
      g_once_init_leave (&infos, list);
    }
  *n = _owb_n_passes;
  return infos;
}

static void
created_free (OwbOptimizeCreated *c)
{
  g_free (c->node);
  g_free (c->op_type);
  g_free (c->domain);
  g_ptr_array_unref (c->from);
  g_free (c);
}

static void
pass_report_free (OwbPassReport *r)
{
  g_free (r->pass);
  g_ptr_array_unref (r->removed);
  g_ptr_array_unref (r->created);
  g_ptr_array_unref (r->near_misses);
  g_free (r);
}

void
owb_optimize_report_free (OwbOptimizeReport *report)
{
  if (!report)
    return;
  g_ptr_array_unref (report->passes);
  g_free (report);
}

static gboolean
pass_disabled (const OwbOptimizeOptions *options, const char *name)
{
  for (const char *const *p = options->disabled_passes; p && *p; p++)
    if (strcmp (*p, name) == 0)
      return TRUE;
  return FALSE;
}

/* Levels nest: basic < extended < layout; "all" is every level. */
static gboolean
level_includes (OwbOptimizeLevel chosen, OwbOptimizeLevel pass_level)
{
  return chosen != OWB_OPTIMIZE_DISABLED && pass_level <= chosen;
}

static OwbPassReport *
pass_report_new (const OwbPass *pass)
{
  OwbPassReport *pr = g_new0 (OwbPassReport, 1);
  pr->pass = g_strdup (pass->name);
  pr->level = pass->level;
  pr->removed = g_ptr_array_new_with_free_func (g_free);
  pr->created = g_ptr_array_new_with_free_func ((GDestroyNotify) created_free);
  pr->near_misses = g_ptr_array_new_with_free_func (g_free);
  return pr;
}

/* Runs the passes `wanted` keeps, in order, each reported; the engine's levels and the quantizer's
 * QDQ passes both go through here. */
static gboolean
run_passes (OwbModel *model, const OwbPass *const *passes, guint n_passes, const OwbOptimizeOptions *options,
            gboolean (*wanted) (const OwbPass *pass, const OwbOptimizeOptions *options), OwbOptimizeReport **report,
            GError **error)
{
  /* Passes read inferred types (value_info) and need a topological order. */
  if (!owb_model_infer_shapes (model, error))
    return FALSE;
  OwbOptimizeReport *rep = g_new0 (OwbOptimizeReport, 1);
  rep->level = options->level;
  rep->passes = g_ptr_array_new_with_free_func ((GDestroyNotify) pass_report_free);
  rep->nodes_before = model->graph->nodes->len;
  gboolean ok = TRUE;
  OwbPassContext ctx = { .model = model, .graph = model->graph, .options = options };
  for (guint i = 0; ok && i < n_passes; i++)
    {
      const OwbPass *pass = passes[i];
      if (wanted && !wanted (pass, options))
        continue;
      OwbPassReport *pr = pass_report_new (pass);
      g_ptr_array_add (rep->passes, pr);
      ctx.report = pr;
      ctx.pass = pass;
      ctx.changed = FALSE;
      gint64 start = g_get_monotonic_time ();
      ok = pass->run (&ctx, error);
      _owb_pass_context_end_pass (&ctx);
      /* Each pass leaves a valid, sorted, inferred graph for the next one. */
      /* A pass that changed nothing leaves the types as they were: inferring them again for each of
       * the twenty passes was most of the optimizer's time on large graphs. */
      gint64 infer_start = g_get_monotonic_time ();
      if (ok && ctx.changed)
        ok = owb_model_infer_shapes (model, error);
      pr->infer_ms = (g_get_monotonic_time () - infer_start) / 1000.0;
      if (!ok && error && *error)
        g_prefix_error (error, "optimizer pass %s: ", pass->name);
      pr->ms = (g_get_monotonic_time () - start) / 1000.0;
    }
  _owb_pass_context_clear (&ctx);
  rep->nodes_after = model->graph->nodes->len;
  if (ok && report)
    *report = rep;
  else
    owb_optimize_report_free (rep);
  return ok;
}

static gboolean
level_wants (const OwbPass *pass, const OwbOptimizeOptions *options)
{
  return level_includes (options->level, pass->level) && !pass_disabled (options, pass->name);
}

gboolean
owb_model_optimize (OwbModel *model, const OwbOptimizeOptions *options, OwbOptimizeReport **report, GError **error)
{
  OwbOptimizeOptions defaults;
  if (!options)
    {
      owb_optimize_options_init (&defaults);
      options = &defaults;
    }
  for (const char *const *p = options->disabled_passes; p && *p; p++)
    {
      gboolean known = FALSE;
      for (guint i = 0; i < _owb_n_passes; i++)
        known |= strcmp (_owb_passes[i]->name, *p) == 0;
      if (!known)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "no optimizer pass is named '%s'", *p);
          return FALSE;
        }
    }
  return run_passes (model, _owb_passes, _owb_n_passes, options, level_wants, report, error);
}

gboolean
owb_model_run_passes (OwbModel *model, const OwbPass *const *passes, guint n_passes, const OwbOptimizeOptions *options,
                      OwbOptimizeReport **report, GError **error)
{
  OwbOptimizeOptions defaults;
  if (!options)
    {
      owb_optimize_options_init (&defaults);
      options = &defaults;
    }
  return run_passes (model, passes, n_passes, options, NULL, report, error);
}

static void
json_string_array (GString *s, GPtrArray *list)
{
  g_string_append_c (s, '[');
  for (guint i = 0; i < list->len; i++)
    {
      owb_json_append_separator (s);
      owb_json_append_string (s, g_ptr_array_index (list, i));
    }
  g_string_append_c (s, ']');
}

char *
owb_optimize_report_to_json (const OwbOptimizeReport *report)
{
  GString *s = g_string_new ("{");
  owb_json_append_member_string (s, "level", owb_optimize_level_to_string (report->level));
  owb_json_append_member_uint (s, "nodes_before", report->nodes_before);
  owb_json_append_member_uint (s, "nodes_after", report->nodes_after);
  owb_json_begin_array (s, "passes");
  for (guint i = 0; i < report->passes->len; i++)
    {
      const OwbPassReport *pr = g_ptr_array_index (report->passes, i);
      owb_json_begin_object (s, NULL);
      owb_json_append_member_string (s, "pass", pr->pass);
      owb_json_append_member_string (s, "level", owb_optimize_level_to_string (pr->level));
      /* milliseconds to the microsecond, fixed point (not owb_json_append_number's digits) */
      owb_json_append_member_fixed (s, "ms", pr->ms, 3);
      owb_json_append_member_fixed (s, "infer_ms", pr->infer_ms, 3);
      owb_json_append_member_uint (s, "nodes_visited", pr->nodes_visited);
      owb_json_append_member_uint (s, "removed_initializers", pr->n_removed_initializers);
      owb_json_append_key (s, "removed");
      json_string_array (s, pr->removed);
      owb_json_begin_array (s, "created");
      for (guint k = 0; k < pr->created->len; k++)
        {
          const OwbOptimizeCreated *c = g_ptr_array_index (pr->created, k);
          owb_json_begin_object (s, NULL);
          owb_json_append_member_string (s, "node", c->node);
          owb_json_append_member_string (s, "op_type", c->op_type);
          owb_json_append_member_string (s, "domain", c->domain);
          owb_json_append_key (s, "from");
          json_string_array (s, c->from);
          g_string_append_c (s, '}');
        }
      g_string_append_c (s, ']');
      owb_json_append_key (s, "near_misses");
      json_string_array (s, pr->near_misses);
      g_string_append_c (s, '}');
    }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}
