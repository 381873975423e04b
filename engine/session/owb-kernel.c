/* owb-kernel.c: kernel-table lookup and the helpers kernels call while they run. */
#include "ir/owb-ir-private.h"
#include <owb/owb-provider.h>
#include <owb/owb-error.h>
#include <owb/owb-op.h>

#include <stdarg.h>
#include <string.h>

static gboolean
same_domain (const char *a, const char *b)
{
  if (!a || strcmp (a, "ai.onnx") == 0)
    a = "";
  if (!b || strcmp (b, "ai.onnx") == 0)
    b = "";
  return strcmp (a, b) == 0;
}

static OwbDataType
checked_type (const OwbKernelDef *def, const OwbValueType *const *input_types, int n_inputs,
              const OwbValueType *output_types)
{
  if (def->type_input < 0)
    return output_types ? output_types[0].dtype : OWB_TYPE_UNDEFINED;
  if (def->type_input < n_inputs && input_types[def->type_input])
    return input_types[def->type_input]->dtype;
  return OWB_TYPE_UNDEFINED;
}

const OwbKernelDef *
owb_kernel_table_lookup (const OwbKernelDef *const *table, guint n_table, const OwbNode *node, int opset,
                         const OwbValueType *const *input_types, const OwbValueType *output_types, char **why)
{
  gboolean op_seen = FALSE, version_seen = FALSE;
  OwbDataType rejected = OWB_TYPE_UNDEFINED;
  /* A kernel reads its inputs as the kinds its op takes; any other kind (a sequence fed to Relu)
   * has no kernel, whatever its element type. */
  for (int i = 0; input_types && i < node->n_inputs; i++)
    if (owb_value_type_kind_is_known (input_types[i])
        && !owb_op_input_accepts_kind (node->domain, node->op_type, i, input_types[i]->kind))
      {
        if (why)
          *why = g_strdup_printf ("no kernel for %s with a %s as input %d ('%s')", node->op_type,
                                  owb_value_kind_name (input_types[i]->kind), i, node->inputs[i]);
        return NULL;
      }
  for (guint t = 0; t < n_table; t++)
    for (const OwbKernelDef *def = table[t]; def->op_type; def++)
      {
        if (strcmp (def->op_type, node->op_type) != 0 || !same_domain (def->domain, node->domain))
          continue;
        op_seen = TRUE;
        if (opset < def->since || (def->until > 0 && opset > def->until))
          continue;
        version_seen = TRUE;
        OwbDataType dtype = checked_type (def, input_types, node->n_inputs, output_types);
        if (def->types && dtype != OWB_TYPE_UNDEFINED && !(def->types & OWB_TYPE_BIT (dtype)))
          {
            rejected = dtype;
            continue;
          }
        return def;
      }
  if (why)
    {
      if (!op_seen)
        *why = g_strdup_printf ("no kernel for %s", node->op_type);
      else if (!version_seen)
        *why = g_strdup_printf ("no kernel for %s at opset %d", node->op_type, opset);
      else
        *why = g_strdup_printf ("no kernel for %s on %s", node->op_type, owb_data_type_name (rejected));
    }
  return NULL;
}

void
owb_kernel_choice_release (OwbProvider *provider, OwbKernelChoice *choice)
{
  if (choice->state && choice->def->free_state)
    choice->def->free_state (choice->state);
  choice->state = NULL;
}

OwbTensor *
owb_kernel_context_new_output (OwbKernelContext *ctx, int i, OwbDataType dtype, int rank, const int64_t *dims,
                               GError **error)
{
  g_return_val_if_fail (i >= 0 && i < ctx->n_outputs, NULL);
  GError *local = NULL;
  OwbDevice *where = ctx->device && (i >= 64 || !(ctx->host_outputs & (G_GUINT64_CONSTANT (1) << i))) ? ctx->device : NULL;
  OwbTensor *t = owb_device_new_tensor (where, dtype, rank, dims, &local);
  if (!t)
    {
      owb_kernel_set_error (ctx, error, local->code, "output %d: %s", i, local->message);
      g_error_free (local);
      return NULL;
    }
  owb_tensor_unref (ctx->outputs[i]);
  ctx->outputs[i] = t;
  return t;
}

void
owb_kernel_set_error (OwbKernelContext *ctx, GError **error, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  _owb_node_set_error_valist (ctx->node, error, code, format, args);
  va_end (args);
}
