/* owb-quant-qdq.c: static quantization in the QDQ format. A plan says, node by node, which inputs
 * are quantized (activations with calibrated ranges, weights per channel, biases to int32) and which
 * outputs share their input's parameters; two passes then write it: DequantizeLinear on the
 * constants, QuantizeLinear/DequantizeLinear pairs on the activations. */
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

/* What quantizing a node means, by op type. */
typedef struct {
  const char *op_type;
  guint act_inputs;   /* bit i: input i is quantized as an activation */
  gboolean outputs;   /* its outputs are quantized too (for every reader) */
  gboolean share;     /* ... with input 0's scale and zero point (data movement, max) */
  int weight_input;   /* a constant input quantized as a weight (-1: none) */
  int bias_input;     /* a constant 1-D input quantized to int32 at s_x * s_w (-1: none) */
} OpRule;

/* Relu and Clip are left out on purpose: the quantized input of the next node clips them, and an
 * extra QDQ pair between a Conv and its Relu would only add error. The smooth activations of
 * MobileNetV3 and EfficientNet (HardSwish, HardSigmoid, Sigmoid, Tanh) are quantized on both sides,
 * as ONNX Runtime's QDQ quantizer does where their input is another node's quantized input: a float
 * reader of a Conv's output would keep that Conv from running on integers, and between two pairs
 * the activation becomes a 256-byte table (fuse_qdq_lookup).
 * LayerNormalization keeps its (wide-ranged) residual input in float for the same reason: outputs
 * are dequantized only for the readers the plan quantizes. */
static const OpRule op_rules[] = {
  { "Conv", 0x1, FALSE, FALSE, 1, 2 },
  { "ConvTranspose", 0x1, FALSE, FALSE, 1, 2 },
  { "Gemm", 0x1, FALSE, FALSE, 1, 2 },
  { "MatMul", 0x1, FALSE, FALSE, 1, -1 },
  { "Add", 0x3, TRUE, FALSE, -1, -1 },
  { "Mul", 0x3, TRUE, FALSE, -1, -1 },
  { "Concat", ~0u, TRUE, FALSE, -1, -1 },
  { "Where", 0x6, TRUE, FALSE, -1, -1 },
  { "AveragePool", 0x1, TRUE, FALSE, -1, -1 },
  { "GlobalAveragePool", 0x1, TRUE, FALSE, -1, -1 },
  { "Sigmoid", 0x1, TRUE, FALSE, -1, -1 },
  { "HardSigmoid", 0x1, TRUE, FALSE, -1, -1 },
  { "HardSwish", 0x1, TRUE, FALSE, -1, -1 },
  { "Tanh", 0x1, TRUE, FALSE, -1, -1 },
  { "Softmax", 0x1, TRUE, FALSE, -1, -1 },
  { "MaxPool", 0x1, TRUE, TRUE, -1, -1 },
  { "GlobalMaxPool", 0x1, TRUE, TRUE, -1, -1 },
  { "Resize", 0x1, TRUE, TRUE, -1, -1 },
  { "Pad", 0x1, TRUE, TRUE, -1, -1 },
  { "Split", 0x1, TRUE, TRUE, -1, -1 },
  { "Gather", 0x1, TRUE, TRUE, -1, -1 },
  { "Transpose", 0x1, TRUE, TRUE, -1, -1 },
  { "Reshape", 0x1, TRUE, TRUE, -1, -1 },
  { "Flatten", 0x1, TRUE, TRUE, -1, -1 },
  { "Squeeze", 0x1, TRUE, TRUE, -1, -1 },
  { "Unsqueeze", 0x1, TRUE, TRUE, -1, -1 },
  { "Slice", 0x1, TRUE, TRUE, -1, -1 },
  { "DepthToSpace", 0x1, TRUE, TRUE, -1, -1 },
  { "SpaceToDepth", 0x1, TRUE, TRUE, -1, -1 },
};

static const OpRule *
find_rule (const OwbNode *node)
{
  if (node->domain && node->domain[0] && strcmp (node->domain, "ai.onnx") != 0)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (op_rules); i++)
    if (strcmp (op_rules[i].op_type, node->op_type) == 0)
      return &op_rules[i];
  return NULL;
}

/* One reader slot to rewire. */
typedef struct {
  OwbNode *node;
  int slot;
} Use;

/* An activation to quantize: a QDQ pair after it, read by `uses` (NULL uses: every reader). */
typedef struct {
  char *name;
  char *root;          /* the tensor whose parameters it takes (itself unless shared) */
  GArray *uses;        /* of Use */
  gboolean all_uses;   /* an output request: every reader reads the dequantized value */
  gboolean constant;   /* a constant input quantized like an activation (its own min/max) */
  OwbDataType type;
  float scale;
  int zero_point;
  gboolean ready;      /* parameters computed */
  gboolean skip;       /* kept in float (override, or no statistics) */
  char *scale_name, *zero_point_name; /* initializers, shared with the tensors that share them */
} Activation;

typedef struct {
  OwbNode *node;
  int slot;
  int axis;
} WeightUse;

typedef struct {
  const OwbQuantOptions *options;
  const OwbQuantCalibration *calibration; /* NULL when only planning what to calibrate */
  GHashTable *activations;  /* name -> Activation * */
  GPtrArray *order;         /* of Activation *, in the order first requested */
  GArray *weights;          /* of WeightUse */
  GArray *biases;           /* of WeightUse (axis unused) */
  GHashTable *excluded_nodes, *excluded_ops;
  GHashTable *quantized_weights; /* "name@axis" -> DequantizeLinear output name (owned) */
  GHashTable *weight_scales;     /* "node" -> weight scale tensor (borrowed from the graph) */
  GHashTable *quantized_nodes;   /* the nodes the plan quantizes (OwbNode *) */
} Plan;

static void
activation_free (Activation *a)
{
  g_free (a->name);
  g_free (a->root);
  g_array_unref (a->uses);
  g_free (a->scale_name);
  g_free (a->zero_point_name);
  g_free (a);
}

static void
plan_init (Plan *plan, const OwbQuantOptions *options, const OwbQuantCalibration *calibration)
{
  memset (plan, 0, sizeof *plan);
  plan->options = options;
  plan->calibration = calibration;
  plan->activations = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) activation_free);
  plan->order = g_ptr_array_new ();
  plan->weights = g_array_new (FALSE, FALSE, sizeof (WeightUse));
  plan->biases = g_array_new (FALSE, FALSE, sizeof (WeightUse));
  plan->excluded_nodes = g_hash_table_new (g_str_hash, g_str_equal);
  plan->excluded_ops = g_hash_table_new (g_str_hash, g_str_equal);
  for (const char *const *p = options->exclude_nodes; p && *p; p++)
    g_hash_table_add (plan->excluded_nodes, (gpointer) *p);
  for (const char *const *p = options->exclude_ops; p && *p; p++)
    g_hash_table_add (plan->excluded_ops, (gpointer) *p);
  plan->quantized_weights = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  plan->weight_scales = g_hash_table_new (g_direct_hash, g_direct_equal);
  plan->quantized_nodes = g_hash_table_new (g_direct_hash, g_direct_equal);
}

static void
plan_clear (Plan *plan)
{
  g_ptr_array_unref (plan->order);
  g_hash_table_unref (plan->activations);
  g_array_unref (plan->weights);
  g_array_unref (plan->biases);
  g_hash_table_unref (plan->excluded_nodes);
  g_hash_table_unref (plan->excluded_ops);
  g_hash_table_unref (plan->quantized_weights);
  g_hash_table_unref (plan->weight_scales);
  g_hash_table_unref (plan->quantized_nodes);
}

static Activation *
request (Plan *plan, const char *name, gboolean constant)
{
  Activation *a = g_hash_table_lookup (plan->activations, name);
  if (a == NULL)
    {
      a = g_new0 (Activation, 1);
      a->name = g_strdup (name);
      a->root = g_strdup (name);
      a->uses = g_array_new (FALSE, FALSE, sizeof (Use));
      a->constant = constant;
      g_hash_table_insert (plan->activations, a->name, a);
      g_ptr_array_add (plan->order, a);
    }
  return a;
}

static gboolean
is_float_value (OwbPassContext *ctx, const char *name)
{
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  if (t)
    return _owb_quant_is_float_tensor (t);
  const OwbTensor *c = owb_pass_get_constant (ctx, name);
  return c && c->kind == OWB_VALUE_TENSOR && c->dtype == OWB_TYPE_FLOAT;
}

/* The axis of a weight's output channels, for per-channel scales. */
static int
weight_axis (const OwbNode *node, const OwbTensor *w)
{
  if (strcmp (node->op_type, "Conv") == 0)
    return 0;
  if (strcmp (node->op_type, "ConvTranspose") == 0)
    return w->rank >= 2 ? 1 : -1;
  if (strcmp (node->op_type, "Gemm") == 0)
    return owb_node_get_int (node, "transB", 0) ? 0 : 1;
  if (strcmp (node->op_type, "MatMul") == 0)
    return w->rank >= 2 ? w->rank - 1 : -1;
  return -1;
}

/* Whether the user keeps a tensor in float (an override of type UNDEFINED). */
static const OwbQuantOverride *
find_override (const Plan *plan, const char *name)
{
  return plan->options->overrides ? g_hash_table_lookup (plan->options->overrides, name) : NULL;
}

static void
plan_node (Plan *plan, OwbPassContext *ctx, OwbNode *node)
{
  const OpRule *rule = find_rule (node);
  if (rule == NULL)
    return;
  if (g_hash_table_contains (plan->excluded_ops, node->op_type)
      || (node->name && g_hash_table_contains (plan->excluded_nodes, node->name)))
    {
      owb_pass_near_miss (ctx, node, "excluded by the user; kept in float");
      return;
    }
  /* Add and Mul with a scalar constant stay float: a variance plus epsilon (a LayerNormalization
   * the exporter wrote out in ops) or a scale factor; quantizing the variance path of a ViT's
   * first LayerNormalization took its output from 40 to 7 dB. A vector constant (a bias, a
   * LayerNormalization's gamma) is quantized with its node. */
  if (strcmp (node->op_type, "Add") == 0 || strcmp (node->op_type, "Mul") == 0)
    for (int i = 0; i < node->n_inputs; i++)
      {
        const OwbTensor *c = owb_pass_get_constant (ctx, owb_node_get_input (node, i));
        if (c && c->nelems == 1)
          return;
      }
  /* Every activation input must be a float tensor, or the node stays float. */
  for (int i = 0; i < node->n_inputs; i++)
    {
      const char *in = owb_node_get_input (node, i);
      gboolean is_weight = i == rule->weight_input && owb_pass_get_constant (ctx, in);
      if (in && (rule->act_inputs & (1u << MIN (i, 31))) && !is_weight && i != rule->bias_input
          && !is_float_value (ctx, in))
        return;
    }
  g_hash_table_add (plan->quantized_nodes, node);
  for (int i = 0; i < node->n_inputs; i++)
    {
      const char *in = owb_node_get_input (node, i);
      if (in == NULL)
        continue;
      const OwbTensor *c = owb_pass_get_constant (ctx, in);
      if (i == rule->weight_input)
        {
          if (c && c->dtype == OWB_TYPE_FLOAT && c->kind == OWB_VALUE_TENSOR)
            {
              int axis = plan->options->per_channel ? weight_axis (node, c) : -1;
              g_array_append_val (plan->weights, ((WeightUse){ node, i, axis }));
              continue;
            }
          if (!is_float_value (ctx, in))
            continue;
          /* A MatMul of two activations (attention): both quantized as activations. */
        }
      else if (i == rule->bias_input)
        {
          if (c && c->dtype == OWB_TYPE_FLOAT && c->rank == 1
              && !(strcmp (node->op_type, "Gemm") == 0 && owb_node_get_float (node, "beta", 1.0f) != 1.0f))
            g_array_append_val (plan->biases, ((WeightUse){ node, i, -1 }));
          continue;
        }
      else if (!(rule->act_inputs & (1u << MIN (i, 31))))
        continue;
      if (!is_float_value (ctx, in))
        continue;
      Activation *a = request (plan, in, c != NULL);
      g_array_append_val (a->uses, ((Use){ node, i }));
    }
  if (!rule->outputs)
    return;
  const char *in0 = owb_node_get_input (node, 0);
  for (int o = 0; o < node->n_outputs; o++)
    {
      const char *out = owb_node_get_output (node, o);
      if (out == NULL || !is_float_value (ctx, out))
        continue;
      Activation *a = request (plan, out, FALSE);
      a->all_uses = TRUE;
      if (rule->share && in0)
        {
          Activation *src = g_hash_table_lookup (plan->activations, in0);
          if (src && !src->constant)
            {
              g_free (a->root);
              a->root = g_strdup (src->root);
            }
          else if (src && src->constant)
            {
              /* A Gather from a constant table: the output takes the table's parameters. */
              g_free (a->root);
              a->root = g_strdup (src->name);
            }
        }
    }
}

static void
plan_graph (Plan *plan, OwbPassContext *ctx)
{
  GPtrArray *nodes = owb_pass_nodes (ctx);
  /* Snapshot: planning does not edit, but the passes that follow will. */
  for (guint i = 0; i < nodes->len; i++)
    plan_node (plan, ctx, g_ptr_array_index (nodes, i));
}

/* Parameters of an activation: the user's override, else its root's calibrated range. */
static gboolean
compute_activation (Plan *plan, OwbPassContext *ctx, Activation *a, GError **error)
{
  if (a->ready || a->skip)
    return TRUE;
  const OwbQuantOptions *o = plan->options;
  a->type = o->activation_type;
  Activation *root = g_hash_table_lookup (plan->activations, a->root);
  if (root && root != a)
    {
      if (!compute_activation (plan, ctx, root, error))
        return FALSE;
      if (root->skip)
        {
          a->skip = TRUE;
          return TRUE;
        }
      a->type = root->type;
      a->scale = root->scale;
      a->zero_point = root->zero_point;
      a->scale_name = g_strdup (root->scale_name);
      a->zero_point_name = g_strdup (root->zero_point_name);
      a->ready = TRUE;
      return TRUE;
    }
  const OwbQuantOverride *ov = find_override (plan, a->name);
  if (ov && ov->type == OWB_TYPE_UNDEFINED)
    {
      a->skip = TRUE;
      return TRUE;
    }
  if (ov)
    a->type = ov->type;
  float lo, hi;
  gboolean symmetric = o->symmetric_activations;
  if (ov && ov->has_range)
    lo = ov->lo, hi = ov->hi;
  else if (a->constant)
    {
      const OwbTensor *c = owb_pass_get_constant (ctx, a->name);
      lo = hi = 0;
      for (int64_t i = 0; i < c->nelems; i++)
        {
          float v = ((const float *) c->data)[i];
          if (isfinite (v))
            lo = MIN (lo, v), hi = MAX (hi, v);
        }
    }
  else if (!owb_quant_calibration_has_tensor (plan->calibration, a->name))
    {
      a->skip = TRUE;
      return TRUE;
    }
  else
    {
      OwbQuantRangeOptions ro = o->range;
      int qmin, qmax;
      if (!_owb_quant_type_range (a->type, symmetric, &qmin, &qmax))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "tensor '%s': %s is not a quantized type",
                       a->name, owb_data_type_name (a->type));
          return FALSE;
        }
      ro.n_quantized_levels = MIN (qmax - qmin + 1, 65536);
      if (!owb_quant_calibration_compute_range (plan->calibration, a->name, &ro, &lo, &hi, error))
        return FALSE;
    }
  int qmin, qmax;
  if (!_owb_quant_type_range (a->type, symmetric, &qmin, &qmax))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "tensor '%s': %s is not a quantized type", a->name,
                   owb_data_type_name (a->type));
      return FALSE;
    }
  _owb_quant_compute_params (lo, hi, a->type, symmetric, &a->scale, &a->zero_point);
  a->ready = TRUE;
  return TRUE;
}

static OwbNode *
new_node (OwbPassContext *ctx, const char *op_type, const char *base)
{
  g_autofree char *name = owb_pass_unique_name (ctx, base);
  return owb_node_new (op_type, "", name);
}

/* Adds a DequantizeLinear of (q, scale, zero point) and returns its output's name (owned by the
 * graph's node). */
static const char *
add_dequantize (OwbPassContext *ctx, const char *tensor, const char *q, const char *scale, const char *zp, int axis,
                const char *const *from, guint n_from)
{
  g_autofree char *base = g_strconcat (tensor, "_DequantizeLinear", NULL);
  OwbNode *dq = new_node (ctx, "DequantizeLinear", base);
  owb_node_add_input (dq, q);
  owb_node_add_input (dq, scale);
  owb_node_add_input (dq, zp);
  g_autofree char *out_base = g_strconcat (tensor, "_DequantizeLinear_Output", NULL);
  g_autofree char *out = owb_pass_unique_name (ctx, out_base);
  owb_node_add_output (dq, out);
  if (axis >= 0)
    owb_node_add_attribute (dq, "axis", OWB_ATTR_INT)->i = axis;
  owb_pass_add_node (ctx, dq, from, n_from);
  return dq->outputs[0];
}

static void
node_names (GArray *uses, GPtrArray *names)
{
  for (guint k = 0; k < uses->len; k++)
    {
      Use *u = &g_array_index (uses, Use, k);
      g_ptr_array_add (names, (gpointer) owb_pass_label (u->node));
    }
}

/* ---- pass 1: weights and biases ---- */

static gboolean
quantize_weights (OwbPassContext *ctx, GError **error)
{
  Plan *plan = ctx->pass->user_data;
  const OwbQuantOptions *o = plan->options;
  plan_graph (plan, ctx);
  if (plan->calibration == NULL)
    return TRUE; /* planning only */
  for (guint k = 0; k < plan->weights->len; k++)
    {
      WeightUse *w = &g_array_index (plan->weights, WeightUse, k);
      const char *name = w->node->inputs[w->slot];
      g_autofree char *key = g_strdup_printf ("%s@%d", name, w->axis);
      const char *from[1] = { owb_pass_label (w->node) };
      const char *dq = g_hash_table_lookup (plan->quantized_weights, key);
      if (dq == NULL)
        {
          const OwbTensor *c = owb_pass_get_constant (ctx, name);
          OwbTensor *q, *scale, *zp;
          if (!_owb_quant_quantize_weight (c, w->axis, o->weight_type, o->symmetric_weights, &q, &scale, &zp, error))
            {
              g_prefix_error (error, "weight '%s' of %s: ", name, owb_pass_label (w->node));
              return FALSE;
            }
          g_autofree char *qb = g_strconcat (name, "_quantized", NULL);
          g_autofree char *sb = g_strconcat (name, "_scale", NULL);
          g_autofree char *zb = g_strconcat (name, "_zero_point", NULL);
          const char *qn = owb_pass_add_initializer (ctx, qb, q);
          const char *sn = owb_pass_add_initializer (ctx, sb, scale);
          const char *zn = owb_pass_add_initializer (ctx, zb, zp);
          dq = add_dequantize (ctx, name, qn, sn, zn, scale->rank == 1 ? w->axis : -1, from, 1);
          g_hash_table_insert (plan->quantized_weights, g_strdup (key), g_strdup (dq));
          g_hash_table_insert (plan->weight_scales, w->node, scale);
        }
      else
        {
          /* The same weight, quantized the same way, for another reader: one DequantizeLinear. */
          const char *sn = NULL;
          OwbNode *producer = owb_pass_producer (ctx, dq);
          if (producer && producer->n_inputs > 1)
            sn = producer->inputs[1];
          g_hash_table_insert (plan->weight_scales, w->node, owb_graph_get_initializer (ctx->graph, sn));
        }
      owb_pass_set_input (ctx, w->node, w->slot, dq);
    }
  /* Biases need the input's scale: compute the activations' parameters now. */
  for (guint k = 0; k < plan->order->len; k++)
    if (!compute_activation (plan, ctx, g_ptr_array_index (plan->order, k), error))
      return FALSE;
  for (guint k = 0; k < plan->biases->len; k++)
    {
      WeightUse *b = &g_array_index (plan->biases, WeightUse, k);
      const char *name = b->node->inputs[b->slot];
      const OwbTensor *wscale = g_hash_table_lookup (plan->weight_scales, b->node);
      Activation *x = g_hash_table_lookup (plan->activations, owb_node_get_input (b->node, 0));
      const OwbTensor *c = owb_pass_get_constant (ctx, name);
      if (wscale == NULL || x == NULL || x->skip || !x->ready || c == NULL)
        {
          owb_pass_near_miss (ctx, b->node, "bias '%s' kept in float: the input or the weight is not quantized", name);
          continue;
        }
      if (wscale->nelems != 1 && wscale->nelems != c->dims[0])
        {
          owb_pass_near_miss (ctx, b->node, "bias '%s' kept in float: %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT
                              " weight scales", name, c->dims[0], wscale->nelems);
          continue;
        }
      OwbTensor *q, *scale, *zp;
      if (!_owb_quant_quantize_bias (c, x->scale, wscale, &q, &scale, &zp, error))
        return FALSE;
      g_autofree char *qb = g_strconcat (name, "_quantized", NULL);
      g_autofree char *sb = g_strconcat (name, "_scale", NULL);
      g_autofree char *zb = g_strconcat (name, "_zero_point", NULL);
      const char *qn = owb_pass_add_initializer (ctx, qb, q);
      const char *sn = owb_pass_add_initializer (ctx, sb, scale);
      const char *zn = owb_pass_add_initializer (ctx, zb, zp);
      const char *from[1] = { owb_pass_label (b->node) };
      const char *dq = add_dequantize (ctx, name, qn, sn, zn, scale->rank == 1 ? 0 : -1, from, 1);
      owb_pass_set_input (ctx, b->node, b->slot, dq);
    }
  owb_pass_prune_initializers (ctx); /* counted in the report by the helper */
  return TRUE;
}

/* ---- pass 2: activations ---- */

static gboolean
quantize_activations (OwbPassContext *ctx, GError **error)
{
  Plan *plan = ctx->pass->user_data;
  if (plan->calibration == NULL)
    return TRUE;
  for (guint k = 0; k < plan->order->len; k++)
    {
      Activation *a = g_ptr_array_index (plan->order, k);
      if (!compute_activation (plan, ctx, a, error))
        return FALSE;
      if (a->skip)
        {
          if (a->uses->len > 0)
            owb_pass_near_miss (ctx, g_array_index (a->uses, Use, 0).node,
                                "input '%s' kept in float: %s", a->name,
                                find_override (plan, a->name) ? "the user's override" : "no calibration statistics");
          continue;
        }
      /* Which readers move to the dequantized value: those that asked; for an output, every reader
       * the plan quantizes. A float reader (a LayerNormalization after a residual Add, a Relu) keeps
       * the exact value: a QDQ pair in front of it would only add error. */
      g_autoptr (GArray) uses = g_array_new (FALSE, FALSE, sizeof (Use));
      if (a->all_uses)
        {
          GPtrArray *readers = owb_pass_consumers (ctx, a->name);
          for (guint r = 0; r < readers->len; r++)
            {
              OwbNode *n = g_ptr_array_index (readers, r);
              if (!g_hash_table_contains (plan->quantized_nodes, n))
                continue;
              for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] && strcmp (n->inputs[i], a->name) == 0)
                  {
                    gboolean seen = FALSE;
                    for (guint u = 0; u < uses->len; u++)
                      seen |= g_array_index (uses, Use, u).node == n && g_array_index (uses, Use, u).slot == i;
                    if (!seen)
                      g_array_append_val (uses, ((Use){ n, i }));
                  }
            }
        }
      else
        g_array_append_vals (uses, a->uses->data, a->uses->len);
      if (uses->len == 0)
        continue;
      g_autoptr (GPtrArray) from = g_ptr_array_new ();
      node_names (uses, from);

      if (a->scale_name == NULL)
        {
          g_autofree char *sb = g_strconcat (a->name, "_scale", NULL);
          g_autofree char *zb = g_strconcat (a->name, "_zero_point", NULL);
          a->scale_name = g_strdup (owb_pass_add_initializer (ctx, sb, owb_tensor_new_scalar_float (a->scale)));
          a->zero_point_name = g_strdup (owb_pass_add_initializer (ctx, zb, _owb_quant_scalar (a->type, a->zero_point)));
          /* Tensors sharing these parameters (after a Reshape, a MaxPool) reuse the names. */
          for (guint s = k + 1; s < plan->order->len; s++)
            {
              Activation *b = g_ptr_array_index (plan->order, s);
              if (strcmp (b->root, a->name) == 0 && b->scale_name == NULL && b != a)
                {
                  b->scale_name = g_strdup (a->scale_name);
                  b->zero_point_name = g_strdup (a->zero_point_name);
                }
            }
        }
      const char *q_out;
      g_autofree char *quantized = NULL;
      if (a->constant)
        {
          /* A constant: stored quantized, so only the DequantizeLinear runs. */
          const OwbTensor *c = owb_pass_get_constant (ctx, a->name);
          int qmin, qmax;
          _owb_quant_type_range (a->type, plan->options->symmetric_activations, &qmin, &qmax);
          OwbTensor *q = owb_tensor_new (a->type, c->rank, c->dims, error);
          if (q == NULL)
            return FALSE;
          for (int64_t i = 0; i < c->nelems; i++)
            {
              double v = nearbyint (((const float *) c->data)[i] / a->scale) + a->zero_point;
              owb_tensor_set_double (q, i, CLAMP (v, qmin, qmax));
            }
          g_autofree char *qb = g_strconcat (a->name, "_quantized", NULL);
          q_out = owb_pass_add_initializer (ctx, qb, q);
        }
      else
        {
          g_autofree char *base = g_strconcat (a->name, "_QuantizeLinear", NULL);
          OwbNode *qn = new_node (ctx, "QuantizeLinear", base);
          owb_node_add_input (qn, a->name);
          owb_node_add_input (qn, a->scale_name);
          owb_node_add_input (qn, a->zero_point_name);
          g_autofree char *out_base = g_strconcat (a->name, "_QuantizeLinear_Output", NULL);
          quantized = owb_pass_unique_name (ctx, out_base);
          owb_node_add_output (qn, quantized);
          owb_pass_add_node (ctx, qn, (const char *const *) from->pdata, from->len);
          q_out = quantized;
        }
      const char *dq = add_dequantize (ctx, a->name, q_out, a->scale_name, a->zero_point_name, -1,
                                       (const char *const *) from->pdata, from->len);
      for (guint u = 0; u < uses->len; u++)
        {
          Use *use = &g_array_index (uses, Use, u);
          owb_pass_set_input (ctx, use->node, use->slot, dq);
        }
    }
  owb_pass_prune_initializers (ctx); /* counted in the report by the helper */
  return TRUE;
}

/* ---- pass 3: activations folded into the QuantizeLinear after them ---- */

/* A clamp Q(x) already does: Q(Relu(x)) is Q(x) when the zero point is the lowest integer (0 then
 * maps to the lowest level, so negatives clamp to it), and Q(Clip(x, lo, hi)) is Q(x) when the
 * integers cannot reach past [lo, hi] by more than half a step. */
static gboolean
clamp_is_redundant (OwbPassContext *ctx, const OwbNode *act, const OwbNode *q)
{
  const OwbTensor *st = owb_pass_get_constant (ctx, owb_node_get_input (q, 1));
  const OwbTensor *zt = owb_pass_get_constant (ctx, owb_node_get_input (q, 2));
  int qmin, qmax;
  if (!st || !zt || st->nelems != 1 || zt->nelems != 1 || !_owb_quant_type_range (zt->dtype, FALSE, &qmin, &qmax))
    return FALSE;
  double scale = owb_tensor_get_double (st, 0), zp = (double) owb_tensor_get_int64 (zt, 0);
  double lo_q = (qmin - zp) * scale, hi_q = (qmax - zp) * scale;
  double lo = -INFINITY, hi = INFINITY;
  if (strcmp (act->op_type, "Relu") == 0)
    lo = 0;
  else
    {
      const OwbTensor *lt = owb_pass_get_constant (ctx, owb_node_get_input (act, 1));
      const OwbTensor *ht = owb_pass_get_constant (ctx, owb_node_get_input (act, 2));
      if ((owb_node_get_input (act, 1) && !lt) || (owb_node_get_input (act, 2) && !ht)
          || (lt && lt->nelems != 1) || (ht && ht->nelems != 1))
        return FALSE; /* bounds computed at run time */
      if (lt)
        lo = owb_tensor_get_double (lt, 0);
      if (ht)
        hi = owb_tensor_get_double (ht, 0);
    }
  if (lo == 0)
    return lo_q == 0; /* exact: the zero point is the lowest level */
  return lo_q >= lo - scale / 2 && hi_q <= hi + scale / 2;
}

static gboolean
fold_activations (OwbPassContext *ctx, GError **error)
{
  Plan *plan = ctx->pass->user_data;
  if (plan->calibration == NULL)
    return TRUE;
  /* A snapshot of the pointers (not g_ptr_array_copy: it would take the graph's free function). */
  GPtrArray *graph_nodes = owb_pass_nodes (ctx);
  g_autoptr (GPtrArray) nodes = g_ptr_array_sized_new (graph_nodes->len);
  for (guint i = 0; i < graph_nodes->len; i++)
    g_ptr_array_add (nodes, g_ptr_array_index (graph_nodes, i));
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *q = g_ptr_array_index (nodes, i);
      if (!owb_pass_is_op (q, "QuantizeLinear"))
        continue;
      const char *y = q->inputs[0];
      OwbNode *act = owb_pass_producer (ctx, y);
      if (!act || !(owb_pass_is_op (act, "Relu") || (owb_pass_is_op (act, "Clip") && act->opset >= 11)))
        continue;
      const char *x = owb_node_get_input (act, 0);
      /* Only when the QuantizeLinear is the activation's only reader (a float reader needs the
       * clamped value) and the activation the input's only reader. */
      if (!x || owb_pass_n_uses (ctx, y) != 1 || owb_pass_n_uses (ctx, x) != 1 || !clamp_is_redundant (ctx, act, q))
        continue;
      const char *from[1] = { owb_pass_label (act) };
      g_autofree char *x_name = g_strdup (x);
      owb_pass_set_input (ctx, q, 0, x_name);
      /* The report names what replaced the activation: the QuantizeLinear now clamps. */
      OwbOptimizeCreated *c = g_new0 (OwbOptimizeCreated, 1);
      c->node = g_strdup (owb_pass_label (q));
      c->op_type = g_strdup (q->op_type);
      c->domain = g_strdup ("");
      c->from = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (c->from, g_strdup (from[0]));
      g_ptr_array_add (ctx->report->created, c);
      owb_pass_remove_node (ctx, act);
    }
  return TRUE;
}

static gboolean
check_options (OwbModel *model, const OwbQuantOptions *o, GError **error)
{
  int qmin, qmax;
  if (!_owb_quant_type_range (o->activation_type, FALSE, &qmin, &qmax))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "activations cannot be quantized to %s (uint8, int8, uint16 or int16)",
                   owb_data_type_name (o->activation_type));
      return FALSE;
    }
  if (o->weight_type != OWB_TYPE_INT8 && o->weight_type != OWB_TYPE_UINT8)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "weights cannot be quantized to %s (int8 or uint8)",
                   owb_data_type_name (o->weight_type));
      return FALSE;
    }
  int64_t opset = owb_model_get_opset (model, "");
  int64_t need = _owb_quant_required_opset (o);
  if (opset < need)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "the model imports opset %" G_GINT64_FORMAT " and %s needs opset %" G_GINT64_FORMAT
                   "; prepare it first (owb_quant_prepare converts it)",
                   opset, need == 21 ? "16-bit QuantizeLinear" : need == 13 ? "per-channel DequantizeLinear" : "QuantizeLinear", need);
      return FALSE;
    }
  return TRUE;
}

static OwbModel *
run_plan (OwbModel *model, Plan *plan, OwbOptimizeReport **report, GError **error)
{
  OwbPass weights = { "quantize_weights", OWB_OPTIMIZE_BASIC,
                      "DequantizeLinear on constant weights (per channel) and int32 biases", quantize_weights, plan };
  OwbPass activations = { "quantize_activations", OWB_OPTIMIZE_BASIC,
                          "QuantizeLinear/DequantizeLinear pairs on activations, with calibrated ranges",
                          quantize_activations, plan };
  OwbPass fold = { "fold_activations", OWB_OPTIMIZE_BASIC,
                    "Relu and Clip folded into the QuantizeLinear after them, where its clamp is the same",
                    fold_activations, plan };
  const OwbPass *passes[] = { &weights, &activations, &fold };
  return _owb_quant_run_passes (model, passes, G_N_ELEMENTS (passes), plan->options, report, error);
}

char **
owb_quant_plan_tensors (OwbModel *model, const OwbQuantOptions *options, GError **error)
{
  OwbQuantOptions defaults;
  if (options == NULL)
    {
      owb_quant_options_init (&defaults);
      options = &defaults;
    }
  Plan plan;
  plan_init (&plan, options, NULL);
  g_autoptr (OwbModel) planned = run_plan (model, &plan, NULL, error);
  gboolean ok = planned != NULL;
  GPtrArray *names = g_ptr_array_new ();
  GHashTable *seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; ok && k < plan.order->len; k++)
    {
      Activation *a = g_ptr_array_index (plan.order, k);
      if (!a->constant && !g_hash_table_contains (seen, a->root))
        {
          g_hash_table_add (seen, a->root);
          g_ptr_array_add (names, g_strdup (a->root));
        }
    }
  g_hash_table_unref (seen);
  plan_clear (&plan);
  g_ptr_array_add (names, NULL);
  char **result = (char **) g_ptr_array_free (names, FALSE);
  if (!ok)
    {
      g_strfreev (result);
      return NULL;
    }
  return result;
}

OwbModel *
owb_quant_quantize_static (OwbModel *model, const OwbQuantCalibration *calibration, const OwbQuantOptions *options,
                           OwbOptimizeReport **report, GError **error)
{
  OwbQuantOptions defaults;
  if (options == NULL)
    {
      owb_quant_options_init (&defaults);
      options = &defaults;
    }
  if (!check_options (model, options, error))
    return NULL;
  Plan plan;
  plan_init (&plan, options, calibration);
  OwbModel *quantized = run_plan (model, &plan, report, error);
  plan_clear (&plan);
  return quantized;
}
