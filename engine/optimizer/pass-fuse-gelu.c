/* pass-fuse-gelu.c: turns the exported GELU formula into one Gelu node. Two forms, in any operand
 * order and association of the products:
 *
 *   erf:  0.5 * x * (1 + Erf (x / sqrt 2))                 (or x * 0.70710678)
 *   tanh: 0.5 * x * (1 + Tanh (sqrt (2/pi) * (x + 0.044715 * x^3)))   (x^3 = Pow (x, 3) or x * x * x)
 *
 * The standard Gelu from opset 20 (approximate "none" or "tanh"), ai.onnx.workbench's Gelu before. */
#include "owb-optimizer-private.h"

#include <math.h>
#include <string.h>

/* Whether `name` is a constant scalar (one element) within a relative 1e-5 of `want`. */
static gboolean
scalar_near (OwbPassContext *ctx, const char *name, double want)
{
  double v;
  return _owb_pass_scalar (ctx, name, &v) && fabs (v - want) <= 1e-5 * fabs (want);
}

/* A binary `op_type` node producing `name` with one operand the constant `want`: returns the other
 * operand. For Div the constant must be the divisor. */
static const char *
scaled_operand (OwbPassContext *ctx, const OwbNode *node, const char *op_type, double want)
{
  if (!owb_pass_is_op (node, op_type) || node->n_inputs != 2)
    return NULL;
  if (scalar_near (ctx, node->inputs[1], want))
    return node->inputs[0];
  if (strcmp (op_type, "Div") != 0 && scalar_near (ctx, node->inputs[0], want))
    return node->inputs[1];
  return NULL;
}

/* The common tail: t = the Erf/Tanh output, then 0.5 * x * (1 + t) in any association. Fills set and
 * returns the final output, or NULL. */
static const char *
match_tail (OwbPassContext *ctx, const char *x, const char *t, OwbPassNodeSet *set)
{
  OwbNode *one = _owb_pass_only_reader (ctx, t);
  const char *one_other = owb_pass_is_op (one, "Add") ? _owb_pass_other_input (one, t) : NULL;
  if (!one_other || !scalar_near (ctx, one_other, 1.0))
    return NULL;
  _owb_pass_node_set_add (set, one);
  OwbNode *m1 = _owb_pass_only_reader (ctx, one->outputs[0]);
  const char *other = owb_pass_is_op (m1, "Mul") ? _owb_pass_other_input (m1, one->outputs[0]) : NULL;
  if (!other)
    return NULL;
  _owb_pass_node_set_add (set, m1);
  if (strcmp (other, x) == 0)
    {
      /* (x * (1 + t)) * 0.5 */
      OwbNode *m2 = _owb_pass_only_reader (ctx, m1->outputs[0]);
      const char *rest = owb_pass_is_op (m2, "Mul") ? _owb_pass_other_input (m2, m1->outputs[0]) : NULL;
      if (!rest || !scalar_near (ctx, rest, 0.5))
        return NULL;
      _owb_pass_node_set_add (set, m2);
      return m2->outputs[0];
    }
  if (scalar_near (ctx, other, 0.5))
    {
      /* ((1 + t) * 0.5) * x */
      OwbNode *m2 = _owb_pass_only_reader (ctx, m1->outputs[0]);
      const char *rest = owb_pass_is_op (m2, "Mul") ? _owb_pass_other_input (m2, m1->outputs[0]) : NULL;
      if (!rest || strcmp (rest, x) != 0)
        return NULL;
      _owb_pass_node_set_add (set, m2);
      return m2->outputs[0];
    }
  /* (x * 0.5) * (1 + t) */
  OwbNode *half = owb_pass_producer (ctx, other);
  if (scaled_operand (ctx, half, "Mul", 0.5) && strcmp (scaled_operand (ctx, half, "Mul", 0.5), x) == 0
      && _owb_pass_only_reader (ctx, other) == m1)
    {
      _owb_pass_node_set_add (set, half);
      return m1->outputs[0];
    }
  return NULL;
}

static void
fuse (OwbPassContext *ctx, OwbNode *anchor, const char *x, OwbPassNodeSet *set, const char *out, gboolean tanh_form)
{
  if (set->full)
    return; /* never part of a pattern removed (the set holds far more than a GELU's nodes) */
  const OwbValueType *xt = owb_pass_value_type (ctx, x);
  if (!xt || !(xt->dtype == OWB_TYPE_FLOAT || xt->dtype == OWB_TYPE_DOUBLE || xt->dtype == OWB_TYPE_FLOAT16
               || xt->dtype == OWB_TYPE_BFLOAT16))
    {
      owb_pass_near_miss (ctx, anchor, "GELU pattern, but its input '%s' is not of a known floating type", x);
      return;
    }
  int opset = owb_pass_opset (ctx);
  gboolean standard = opset >= 20;
  if (!standard && ctx->options->portable)
    {
      owb_pass_near_miss (ctx, anchor, "needs opset 20 for a standard Gelu (model has %d); kept as is (portable)", opset);
      return;
    }
  char *x_name = g_strdup (x), *out_name = g_strdup (out);
  char *base = g_strdup (owb_pass_label (anchor));
  GPtrArray *from = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *read = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < set->n; i++)
    {
      g_ptr_array_add (from, g_strdup (owb_pass_label (set->nodes[i])));
      for (int k = 0; k < set->nodes[i]->n_inputs; k++)
        g_ptr_array_add (read, g_strdup (set->nodes[i]->inputs[k]));
    }
  for (int i = 0; i < set->n; i++)
    owb_pass_remove_node (ctx, set->nodes[i]);
  char *name = owb_pass_scoped_name (ctx, base, "Gelu");
  g_free (base);
  if (!standard)
    owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *gelu = owb_node_new ("Gelu", standard ? "" : OWB_DOMAIN, name);
  owb_node_add_input (gelu, x_name);
  owb_node_add_output (gelu, out_name);
  if (tanh_form || !standard)
    {
      OwbAttribute *a = owb_node_add_attribute (gelu, "approximate", OWB_ATTR_STRING);
      a->s = g_strdup (tanh_form ? "tanh" : "none");
      a->s_len = strlen (a->s);
    }
  owb_pass_add_node (ctx, gelu, (const char *const *) from->pdata, from->len);
  /* Constant nodes that held 0.5, 1, sqrt 2... and that nothing reads now. */
  for (guint i = 0; i < read->len; i++)
    {
      OwbNode *producer = owb_pass_producer (ctx, g_ptr_array_index (read, i));
      if (owb_pass_is_op (producer, "Constant") && owb_pass_n_uses (ctx, producer->outputs[0]) == 0)
        owb_pass_remove_node (ctx, producer);
    }
  g_ptr_array_unref (read);
  g_ptr_array_unref (from);
  g_free (name);
  g_free (x_name);
  g_free (out_name);
}

static void
try_erf (OwbPassContext *ctx, OwbNode *erf)
{
  const char *in = owb_node_get_input (erf, 0);
  OwbNode *scale = in ? owb_pass_producer (ctx, in) : NULL;
  const char *x = scaled_operand (ctx, scale, "Div", G_SQRT2);
  if (!x)
    x = scaled_operand (ctx, scale, "Mul", M_SQRT1_2);
  if (!x)
    return;
  OwbPassNodeSet set = { { NULL }, 0, FALSE };
  _owb_pass_node_set_add (&set, scale);
  _owb_pass_node_set_add (&set, erf);
  const char *out = match_tail (ctx, x, erf->outputs[0], &set);
  if (!out)
    return;
  if (_owb_pass_only_reader (ctx, in) != erf)
    {
      owb_pass_near_miss (ctx, erf, "GELU pattern, but x / sqrt 2 ('%s') is also used elsewhere", in);
      return;
    }
  fuse (ctx, erf, x, &set, out, FALSE);
}

/* x^3 as Pow (x, 3), Mul (x, Mul (x, x)) or Mul (Mul (x, x), x), used only by `reader`. */
static gboolean
match_cube (OwbPassContext *ctx, const char *cube, const char *x, const OwbNode *reader, OwbPassNodeSet *set)
{
  OwbNode *p = owb_pass_producer (ctx, cube);
  if (!p || _owb_pass_only_reader (ctx, cube) != reader)
    return FALSE;
  if (owb_pass_is_op (p, "Pow") && p->n_inputs == 2 && strcmp (p->inputs[0], x) == 0 && scalar_near (ctx, p->inputs[1], 3.0))
    {
      _owb_pass_node_set_add (set, p);
      return TRUE;
    }
  const char *sq = owb_pass_is_op (p, "Mul") ? _owb_pass_other_input (p, x) : NULL;
  OwbNode *s = sq ? owb_pass_producer (ctx, sq) : NULL;
  if (owb_pass_is_op (s, "Mul") && s->n_inputs == 2 && strcmp (s->inputs[0], x) == 0 && strcmp (s->inputs[1], x) == 0
      && _owb_pass_only_reader (ctx, sq) == p)
    {
      _owb_pass_node_set_add (set, p);
      _owb_pass_node_set_add (set, s);
      return TRUE;
    }
  return FALSE;
}

static void
try_tanh (OwbPassContext *ctx, OwbNode *tanh_node)
{
  const char *in = owb_node_get_input (tanh_node, 0);
  OwbNode *scale = in ? owb_pass_producer (ctx, in) : NULL;
  const char *inner = scaled_operand (ctx, scale, "Mul", sqrt (2.0 / G_PI));
  OwbNode *sum = inner ? owb_pass_producer (ctx, inner) : NULL;
  if (!owb_pass_is_op (sum, "Add") || sum->n_inputs != 2)
    return;
  for (int i = 0; i < 2; i++)
    {
      const char *x = sum->inputs[i];
      OwbNode *cubic = owb_pass_producer (ctx, sum->inputs[1 - i]);
      const char *cube = scaled_operand (ctx, cubic, "Mul", 0.044715);
      if (!cube)
        continue;
      OwbPassNodeSet set = { { NULL }, 0, FALSE };
      if (!match_cube (ctx, cube, x, cubic, &set))
        continue;
      _owb_pass_node_set_add (&set, cubic);
      _owb_pass_node_set_add (&set, sum);
      _owb_pass_node_set_add (&set, scale);
      _owb_pass_node_set_add (&set, tanh_node);
      const char *out = match_tail (ctx, x, tanh_node->outputs[0], &set);
      if (!out)
        return;
      const char *inner_values[] = { sum->inputs[1 - i], inner, in };
      for (guint k = 0; k < G_N_ELEMENTS (inner_values); k++)
        if (!_owb_pass_only_reader (ctx, inner_values[k]))
          {
            owb_pass_near_miss (ctx, tanh_node, "GELU (tanh) pattern, but its intermediate '%s' is also used elsewhere",
                                 inner_values[k]);
            return;
          }
      fuse (ctx, tanh_node, x, &set, out, TRUE);
      return;
    }
}

static gboolean
is_erf_or_tanh (const OwbNode *node)
{
  return (owb_pass_is_op (node, "Erf") || owb_pass_is_op (node, "Tanh")) && node->n_inputs == 1 && node->n_outputs == 1;
}

static void
try_fuse (OwbPassContext *ctx, OwbNode *node)
{
  if (owb_pass_is_op (node, "Erf"))
    try_erf (ctx, node);
  else
    try_tanh (ctx, node);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  _owb_pass_fuse_each_anchor (ctx, is_erf_or_tanh, try_fuse);
  owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_gelu = {
  "fuse_gelu",
  OWB_OPTIMIZE_EXTENDED,
  "turns the erf and tanh GELU subgraphs into one Gelu",
  run,
};
