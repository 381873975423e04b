/* owb-quant-prepare.c: the quantizer's defaults and its pre-processing (opset conversion, shapes,
 * constant folding, BatchNormalization folded into Conv), done before calibration so that the
 * calibrated tensors are the ones quantization sees, under the file's names. */
#include "owb-quant-private.h"

#include <string.h>

void
owb_quant_options_init (OwbQuantOptions *options)
{
  memset (options, 0, sizeof *options);
  owb_quant_range_options_init (&options->range);
  /* ONNX Runtime's QDQ defaults, which its CPU kernels run fastest: u8 asymmetric activations,
   * s8 symmetric weights per channel. */
  options->activation_type = OWB_TYPE_UINT8;
  options->weight_type = OWB_TYPE_INT8;
  options->per_channel = TRUE;
  options->symmetric_activations = FALSE;
  options->symmetric_weights = TRUE;
}

/* The passes pre-processing keeps: the basic level (folding, no-ops, dead code) and BatchNorm
 * folding; fusions into the engine's own ops and layout changes are left out (portable output,
 * and every tensor a user may want to compare keeps its name). */
static gboolean
kept_pass (const OwbPassInfo *info)
{
  return info->level == OWB_OPTIMIZE_BASIC || strcmp (info->name, "fuse_conv_bn") == 0;
}

/* Nodes without a name get one ("Conv_12"), so that a user can exclude them, reports can name them
 * and the fallback can keep them in float. */
static void
name_nodes (OwbGraph *g)
{
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->name && n->name[0])
        g_hash_table_add (used, n->name);
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->name && n->name[0])
        continue;
      for (guint k = i;; k++)
        {
          char *name = g_strdup_printf ("%s_%u", n->op_type, k);
          if (!g_hash_table_contains (used, name))
            {
              g_free (n->name);
              n->name = name;
              g_hash_table_add (used, n->name);
              break;
            }
          g_free (name);
        }
    }
}

OwbModel *
owb_quant_prepare (OwbModel *model, const OwbQuantOptions *options, OwbOptimizeReport **report, GError **error)
{
  OwbQuantOptions defaults;
  if (options == NULL)
    {
      owb_quant_options_init (&defaults);
      options = &defaults;
    }
  g_autoptr (OwbModel) copy = owb_model_dup (model);
  int64_t opset = owb_model_get_opset (copy, "");
  /* 13 at least, even per tensor: dynamic quantization and the fallback may want per-channel. */
  int64_t target = MAX (_owb_quant_required_opset (options), 13);
  if (opset < target)
    {
      if (!owb_model_convert_opset (copy, target, error))
        {
          g_prefix_error (error, "converting opset %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT " for quantization: ",
                          opset, target);
          return NULL;
        }
    }
  guint n_passes;
  const OwbPassInfo *passes = owb_optimize_list_passes (&n_passes);
  g_autoptr (GPtrArray) disabled = g_ptr_array_new ();
  for (guint i = 0; i < n_passes; i++)
    if (!kept_pass (&passes[i]))
      g_ptr_array_add (disabled, (gpointer) passes[i].name);
  g_ptr_array_add (disabled, NULL);
  g_autoptr (GPtrArray) providers = _owb_quant_dup_providers (options, error);
  if (providers == NULL)
    return NULL;
  OwbOptimizeOptions oo;
  owb_optimize_options_init (&oo);
  oo.level = OWB_OPTIMIZE_EXTENDED;
  oo.portable = TRUE;
  oo.providers = providers;
  oo.disabled_passes = (const char *const *) disabled->pdata;
  if (!owb_model_optimize (copy, &oo, report, error))
    {
      g_prefix_error (error, "preparing the model for quantization: ");
      return NULL;
    }
  name_nodes (copy->graph);
  return g_steal_pointer (&copy);
}
