/* owb-output-check.c: the check that keeps every file a command or the app writes off the input
 * model, its external data and the other outputs of the same command. One implementation for
 * `owb optimize`, `owb quantize` and the pages' Save As, so that none of them compares paths. */
#include <owb/owb-error.h>
#include <owb/owb-output-check.h>

static gboolean
clash (OwbOutputFile *out, OwbOutputClash kind, const char *with, GError **error)
{
  out->clash = kind;
  out->clash_path = with;
  switch (kind)
    {
    case OWB_OUTPUT_CLASH_INPUT:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "refusing to overwrite the input model '%s' with %s '%s'; choose another file", with, out->what,
                   out->path);
      break;
    case OWB_OUTPUT_CLASH_EXTERNAL_DATA:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "refusing to overwrite '%s', an external data file of the input model, with %s '%s'; "
                   "choose another file", with, out->what, out->path);
      break;
    case OWB_OUTPUT_CLASH_OUTPUT:
    case OWB_OUTPUT_CLASH_NONE:
      break;
    }
  return FALSE;
}

gboolean
owb_output_files_check (const char *input, const OwbFileIdentity *input_id, const OwbModel *model,
                        OwbOutputFile *outputs, guint n_outputs, GError **error)
{
  g_return_val_if_fail (n_outputs == 0 || outputs != NULL, FALSE);
  g_auto (OwbFileIdentity) own_input_id = { 0 };
  if (input != NULL && input_id == NULL)
    {
      if (!owb_file_identity_init (&own_input_id, input, error))
        return FALSE;
      input_id = &own_input_id;
    }
  for (guint i = 0; i < n_outputs; i++)
    {
      OwbOutputFile *out = &outputs[i];
      out->clash = OWB_OUTPUT_CLASH_NONE;
      out->clash_path = NULL;
      if (!out->path)
        continue;
      owb_file_identity_clear (&out->identity);
      if (!owb_file_identity_init (&out->identity, out->path, error))
        return FALSE;
      if (input_id != NULL && owb_file_identity_equal (&out->identity, input_id))
        return clash (out, OWB_OUTPUT_CLASH_INPUT, input, error);
      const char *data = model ? owb_model_find_external_file (model, &out->identity) : NULL;
      if (data)
        return clash (out, OWB_OUTPUT_CLASH_EXTERNAL_DATA, data, error);
      for (guint k = 0; k < i; k++)
        if (outputs[k].path && owb_file_identity_equal (&outputs[k].identity, &out->identity))
          {
            clash (out, OWB_OUTPUT_CLASH_OUTPUT, outputs[k].path, NULL);
            g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                         "%s and %s name the same file '%s'; give each its own", outputs[k].what, out->what,
                         out->path);
            return FALSE;
          }
    }
  return TRUE;
}

void
owb_output_files_clear (OwbOutputFile *outputs, guint n_outputs)
{
  for (guint i = 0; i < n_outputs; i++)
    owb_file_identity_clear (&outputs[i].identity);
}
