/* owb-op-names.c: the names of each op's inputs and outputs ("X", "W", "B" for Conv), the display
 * metadata that the graph view and the inspector show beside a weight. ONNX's ops take theirs from
 * the spec (owb-op-names-onnx.h, generated); the engine's own ops are listed here. */
#include "owb-ops-private.h"

#include <string.h>

typedef struct {
  const char *domain;
  const char *op_type;
  const char *inputs;  /* space-separated */
  const char *outputs;
  gboolean variadic_input, variadic_output; /* the last name stands for every index from it on */
} NamesRow;

static const NamesRow rows[] = {
#include "owb-op-names-onnx.h"
  /* ai.onnx.workbench: the engine's fused and channels-last ops (README, "Optimized models") */
  { OWB_DOMAIN, "FusedConv", "X W B Z", "Y", 0, 0 },
  { OWB_DOMAIN, "FusedMatMul", "A B bias", "Y", 0, 0 },
  { OWB_DOMAIN, "FusedGemm", "A B C", "Y", 0, 0 },
  { OWB_DOMAIN, "LayerNormalization", "X Scale B", "Y Mean InvStdDev", 0, 0 },
  { OWB_DOMAIN, "Gelu", "X", "Y", 0, 0 },
  { OWB_DOMAIN, "BiasGelu", "X bias", "Y", 0, 0 },
  { OWB_DOMAIN, "SkipLayerNormalization", "input skip gamma beta bias", "output mean inv_std_var input_skip_bias_sum", 0, 0 },
  { OWB_DOMAIN, "MultiHeadAttention", "query key value attention_bias", "output", 0, 0 },
  { OWB_DOMAIN, "NhwcConv", "X W B Z", "Y", 0, 0 },
  { OWB_DOMAIN, "NhwcConvTranspose", "X W B", "Y", 0, 0 },
  { OWB_DOMAIN, "NhwcMaxPool", "X", "Y", 0, 0 },
  { OWB_DOMAIN, "NhwcAveragePool", "X", "Y", 0, 0 },
  { OWB_DOMAIN, "NhwcGlobalAveragePool", "X", "Y", 0, 0 },
  { OWB_DOMAIN, "NhwcPointwiseDepthwise", "X W1 B1 W2 B2", "Y", 0, 0 },
  /* the integer ops of the QDQ fusions */
  { OWB_DOMAIN, "NhwcQLinearConv", "x x_scale x_zero_point w w_scale w_zero_point y_scale y_zero_point B Table", "y", 0, 0 },
  { OWB_DOMAIN, "QLinearLookup", "X Table", "Y", 0, 0 },
  { OWB_DOMAIN, "QLinearBinaryLookup", "A B Table", "Y", 0, 0 },
  { OWB_DOMAIN, "DynamicQuantizeMatMul", "A B b_scale b_zero_point bias", "Y", 0, 0 },
  { OWB_DOMAIN, "QLinearBinary", "A a_scale a_zero_point B b_scale b_zero_point y_scale y_zero_point", "Y", 0, 0 },
  { OWB_DOMAIN, "QLinearGlobalAveragePool", "X x_scale x_zero_point y_scale y_zero_point", "Y", 0, 0 },
};

typedef struct {
  char **inputs, **outputs;
  int n_inputs, n_outputs;
  gboolean variadic_input, variadic_output;
} Names;

static const char *
normal_domain (const char *domain)
{
  return !domain || strcmp (domain, "ai.onnx") == 0 ? "" : domain;
}

/* "domain\nop" -> Names, built once and read-only after. */
static GHashTable *
names_index (void)
{
  static gsize once = 0;
  static GHashTable *index;
  if (g_once_init_enter (&once))
    {
      index = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        {
          Names *n = g_new0 (Names, 1);
          n->inputs = g_strsplit (rows[i].inputs, " ", -1);
          n->outputs = g_strsplit (rows[i].outputs, " ", -1);
          n->n_inputs = rows[i].inputs[0] ? (int) g_strv_length (n->inputs) : 0;
          n->n_outputs = rows[i].outputs[0] ? (int) g_strv_length (n->outputs) : 0;
          n->variadic_input = rows[i].variadic_input;
          n->variadic_output = rows[i].variadic_output;
          g_hash_table_insert (index, g_strconcat (normal_domain (rows[i].domain), "\n", rows[i].op_type, NULL), n);
        }
      g_once_init_leave (&once, 1);
    }
  return index;
}

static const Names *
names_of (const OwbOpSchema *schema)
{
  if (!schema)
    return NULL;
  g_autofree char *key = g_strconcat (normal_domain (schema->domain), "\n", schema->op_type, NULL);
  return g_hash_table_lookup (names_index (), key);
}

static const char *
name_at (char **names, int n, gboolean variadic, int index)
{
  if (index < 0 || n == 0)
    return NULL;
  if (index < n)
    return names[index];
  return variadic ? names[n - 1] : NULL;
}

const char *
owb_op_schema_get_input_name (const OwbOpSchema *schema, int index)
{
  const Names *n = names_of (schema);
  return n ? name_at (n->inputs, n->n_inputs, n->variadic_input, index) : NULL;
}

gboolean
owb_op_schema_is_input_variadic (const OwbOpSchema *schema, int index)
{
  const Names *n = names_of (schema);
  return n && n->variadic_input && n->n_inputs > 0 && index >= n->n_inputs - 1;
}

gboolean
owb_op_schema_is_output_variadic (const OwbOpSchema *schema, int index)
{
  const Names *n = names_of (schema);
  return n && n->variadic_output && n->n_outputs > 0 && index >= n->n_outputs - 1;
}

const char *
owb_op_schema_get_output_name (const OwbOpSchema *schema, int index)
{
  const Names *n = names_of (schema);
  return n ? name_at (n->outputs, n->n_outputs, n->variadic_output, index) : NULL;
}
