/* cpu-activation.c: parsing the fused ops' activation attributes (see cpu-activation-private.h). */
#include "cpu-activation-private.h"

#include <math.h>
#include <string.h>

gboolean
_owb_cpu_activation_parse (const OwbNode *node, OwbCpuActivation *act, GError **error)
{
  static const struct {
    const char *name;
    OwbCpuActivationKind kind;
    int n_params;
    double p0, p1; /* defaults, as the standard ops define them */
  } table[] = {
    { "Relu", OWB_CPU_ACT_RELU, 0, 0, 0 },
    { "LeakyRelu", OWB_CPU_ACT_LEAKY_RELU, 1, 0.01, 0 },
    { "Clip", OWB_CPU_ACT_CLIP, 2, -INFINITY, INFINITY },
    { "Sigmoid", OWB_CPU_ACT_SIGMOID, 0, 0, 0 },
    { "Tanh", OWB_CPU_ACT_TANH, 0, 0, 0 },
    { "HardSigmoid", OWB_CPU_ACT_HARD_SIGMOID, 2, 0.2, 0.5 },
    { "HardSwish", OWB_CPU_ACT_HARD_SWISH, 2, 1.0 / 6.0, 0.5 },
    { "Swish", OWB_CPU_ACT_SWISH, 0, 0, 0 },
    { "Gelu", OWB_CPU_ACT_GELU, 0, 0, 0 },
    { "FastGelu", OWB_CPU_ACT_FAST_GELU, 0, 0, 0 },
  };
  memset (act, 0, sizeof *act);
  const char *name = owb_node_get_string (node, "activation", NULL);
  if (!name)
    return TRUE;
  int n = 0;
  const float *params = owb_node_get_floats (node, "activation_params", &n);
  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (strcmp (name, table[i].name) == 0)
      {
        if (params && n != table[i].n_params)
          {
            g_autofree char *who = owb_node_describe (node);
            g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: activation %s takes %d activation_params, got %d",
                         who, name, table[i].n_params, n);
            return FALSE;
          }
        act->kind = table[i].kind;
        act->p0 = params && n > 0 ? params[0] : table[i].p0;
        act->p1 = params && n > 1 ? params[1] : table[i].p1;
        return TRUE;
      }
  g_autofree char *who = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: activation '%s' is not supported", who, name);
  return FALSE;
}
