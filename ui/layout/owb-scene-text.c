/* owb-scene-text.c: the words inside the scene's boxes and on its edges: key attributes of an op,
 * its initializers shown compactly, and value types as "float32 1×64×56×56". */
#include "owb-graph-scene-private.h"

#include <owb/owb-op.h>

#include <string.h>

#define MAX_ATTRIBUTE_TEXT 28 /* longer generic attribute values are left out, not cut */

double
_owb_scene_measure (const OwbSceneStyle *style, const char *text, OwbSceneFont font)
{
  if (text == NULL || text[0] == '\0')
    return 0;
  if (style->measure)
    return style->measure (text, font, style->measure_data);
  return 7.0 * g_utf8_strlen (text, -1);
}

char *
_owb_scene_short_dim (const char *param)
{
  glong n = g_utf8_strlen (param, -1);
  if (n <= OWB_SCENE_MAX_DIM_CHARS)
    return g_strdup (param);
  /* Exporters' generated names ("p2o.DynamicDimension.0", "unk__1234"): what tells two apart
   * is the first segment and the last, so a dotted name keeps those ("p2o…0"). */
  const char *first_dot = strchr (param, '.'), *last_dot = strrchr (param, '.');
  if (first_dot && last_dot != first_dot && first_dot - param <= 8 && strlen (last_dot + 1) <= 6)
    return g_strdup_printf ("%.*s…%s", (int) (first_dot - param), param, last_dot + 1);
  /* Otherwise its start and its end, cut at characters. */
  const char *head_end = g_utf8_offset_to_pointer (param, 9);
  const char *tail = g_utf8_offset_to_pointer (param, n - 6);
  return g_strdup_printf ("%.*s…%s", (int) (head_end - param), param, tail);
}

static void
append_dim (GString *s, OwbDim d, gboolean shorten)
{
  if (d.value >= 0)
    g_string_append_printf (s, "%" G_GINT64_FORMAT, d.value);
  else if (d.param && shorten)
    {
      g_autofree char *short_name = _owb_scene_short_dim (d.param);
      g_string_append (s, short_name);
    }
  else if (d.param)
    g_string_append (s, d.param);
  else
    g_string_append_c (s, '?');
}

static const char *
dtype_name (OwbDataType dtype)
{
  /* Spelled as people read shapes (PyTorch, NumPy): the bit width says what "float" means. */
  switch (dtype)
    {
    case OWB_TYPE_FLOAT: return "float32";
    case OWB_TYPE_DOUBLE: return "float64";
    default: return owb_data_type_name (dtype);
    }
}

static char *
format_type (const OwbValueType *type, gboolean shorten)
{
  if (type == NULL)
    return NULL;
  gboolean known_dtype = type->dtype != OWB_TYPE_UNDEFINED;
  GString *s = g_string_new (NULL);
  switch (type->kind)
    {
    case OWB_VALUE_TENSOR:
      break;
    case OWB_VALUE_SEQUENCE:
      /* TRANSLATORS: a value's type on a graph edge: a sequence of tensors of this element type */
      g_string_append_printf (s, C_("graph type", "sequence⟨%s⟩"), known_dtype ? dtype_name (type->dtype) : "?");
      return g_string_free (s, FALSE);
    case OWB_VALUE_OPTIONAL:
      g_string_append_printf (s, C_("graph type", "optional⟨%s⟩"), known_dtype ? dtype_name (type->dtype) : "?");
      return g_string_free (s, FALSE);
    case OWB_VALUE_MAP:
      g_string_append_printf (s, C_("graph type", "map⟨%s, %s⟩"), dtype_name (type->key_dtype), dtype_name (type->dtype));
      return g_string_free (s, FALSE);
    case OWB_VALUE_SPARSE_TENSOR:
      g_string_append (s, C_("graph type", "sparse"));
      g_string_append_c (s, ' ');
      break;
    default:
      g_string_free (s, TRUE);
      return NULL;
    }
  if (!known_dtype && type->rank < 0)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  g_string_append (s, known_dtype ? dtype_name (type->dtype) : "?");
  if (type->rank == 0)
    {
      /* TRANSLATORS: the shape of a rank-0 tensor, after its element type: "float32 scalar" */
      g_string_append_c (s, ' ');
      g_string_append (s, C_("graph type", "scalar"));
    }
  else if (type->rank > 0)
    {
      g_string_append_c (s, ' ');
      for (int i = 0; i < type->rank && i < OWB_MAX_RANK; i++)
        {
          if (i)
            g_string_append (s, "×");
          append_dim (s, type->dims[i], shorten);
        }
    }
  return g_string_free (s, FALSE);
}

char *
_owb_scene_format_type (const OwbValueType *type)
{
  return format_type (type, TRUE);
}

char *
owb_scene_format_type_full (const OwbValueType *type)
{
  return format_type (type, FALSE);
}

static void
append_int64s (GString *s, const int64_t *v, int n, const char *sep)
{
  for (int i = 0; i < n; i++)
    {
      if (i)
        g_string_append (s, sep);
      g_string_append_printf (s, "%" G_GINT64_FORMAT, v[i]);
    }
}

char *
_owb_scene_format_tensor_shape (const OwbTensor *tensor)
{
  if (tensor->rank == 0)
    return g_strdup (C_("graph type", "scalar"));
  GString *s = g_string_new (NULL);
  append_int64s (s, tensor->dims, tensor->rank, "×");
  return g_string_free (s, FALSE);
}

static void
append_double (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  /* %g in the C locale: a German desktop must not turn 0.5 into "0,5" in one box and not another. */
  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.4g", v));
}

static gboolean
is_integer_type (OwbDataType t)
{
  return (OWB_TYPE_BIT (t) & (OWB_TYPES_INT | OWB_TYPE_BIT (OWB_TYPE_BOOL))) != 0;
}

/* A tensor's few values ("0.5", "[1, -1]"), or NULL when it is too big to show. */
static char *
format_small_value (const OwbTensor *t)
{
  if (t->kind != OWB_VALUE_TENSOR || t->dtype == OWB_TYPE_STRING || t->data == NULL
      || owb_data_type_size (t->dtype) == 0)
    return NULL;
  gboolean ints = is_integer_type (t->dtype);
  if (t->nelems == 1 && t->rank <= 1)
    {
      GString *s = g_string_new (NULL);
      if (ints)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, owb_tensor_get_int64 (t, 0));
      else
        append_double (s, owb_tensor_get_double (t, 0));
      return g_string_free (s, FALSE);
    }
  /* Short integer vectors are shapes, axes and pads: their values are what the reader wants. */
  if (ints && t->rank == 1 && t->nelems >= 1 && t->nelems <= 4)
    {
      GString *s = g_string_new ("[");
      for (int64_t i = 0; i < t->nelems; i++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", owb_tensor_get_int64 (t, i));
      g_string_append_c (s, ']');
      return g_string_free (s, FALSE);
    }
  return NULL;
}

OwbTensor *
_owb_scene_find_initializer (const OwbGraph *graph, const char *name)
{
  for (const OwbGraph *g = graph; g; g = g->parent)
    {
      OwbTensor *t = owb_graph_get_initializer (g, name);
      if (t)
        return t;
    }
  return NULL;
}

/* The op's own name for the input (its schema's), so that a weight reads "W", not "input 1". */
static char *
input_label (const OwbNode *node, int i)
{
  const OwbOpSchema *schema = owb_op_schema_lookup (node->domain, node->op_type, node->opset > 0 ? node->opset : G_MAXINT);
  const char *known = owb_op_schema_get_input_name (schema, i);
  if (known && !owb_op_schema_is_input_variadic (schema, i))
    return g_strdup (known);
  /* Unknown op or one of many alike (Concat's): the initializer's own name when short, its position
   * otherwise. */
  const char *name = node->inputs[i];
  if (g_utf8_strlen (name, -1) <= 12)
    return g_strdup (name);
  return g_strdup_printf ("in%d", i);
}

static void
add_line (GPtrArray *texts, GPtrArray *tensors, char *text, const char *tensor)
{
  g_ptr_array_add (texts, text);
  g_ptr_array_add (tensors, (gpointer) tensor);
}

static gboolean
all_equal (const int64_t *v, int n, int64_t value)
{
  for (int i = 0; i < n; i++)
    if (v[i] != value)
      return FALSE;
  return TRUE;
}

static void
append_part (GString *s, const char *part)
{
  if (s->len)
    g_string_append (s, " · ");
  g_string_append (s, part);
}

/* "kernel 3×3 · stride 2 · pad 1 · dilation 2 · group 32" for convolutions and pools. */
static char *
window_line (const OwbNode *node, const OwbGraph *graph)
{
  g_autoptr (GString) s = g_string_new (NULL);
  int n;
  const int64_t *kernel = owb_node_get_ints (node, "kernel_shape", &n);
  g_autoptr (GString) part = g_string_new (NULL);
  if (kernel && n > 0)
    append_int64s (part, kernel, n, "×");
  else if (node->n_inputs > 1 && node->inputs[1][0])
    {
      /* Conv may leave kernel_shape out: the weight's spatial dims say it. */
      OwbTensor *w = _owb_scene_find_initializer (graph, node->inputs[1]);
      if (w && w->rank > 2)
        append_int64s (part, w->dims + 2, w->rank - 2, "×");
    }
  if (part->len)
    {
      /* TRANSLATORS: key attributes of a convolution or pool in a graph box, "kernel 3×3 · stride 2
       * · pad 1"; the ONNX words are often kept as they are */
      g_string_prepend_c (part, ' ');
      g_string_prepend (part, C_("graph box", "kernel"));
      append_part (s, part->str);
    }
  const int64_t *strides = owb_node_get_ints (node, "strides", &n);
  if (strides && n > 0 && !all_equal (strides, n, 1))
    {
      g_string_assign (part, C_("graph box", "stride"));
      g_string_append_c (part, ' ');
      if (all_equal (strides, n, strides[0]))
        append_int64s (part, strides, 1, "");
      else
        append_int64s (part, strides, n, "×");
      append_part (s, part->str);
    }
  const int64_t *pads = owb_node_get_ints (node, "pads", &n);
  if (pads && n > 0 && !all_equal (pads, n, 0))
    {
      g_string_assign (part, all_equal (pads, n, pads[0]) ? C_("graph box", "pad") : C_("graph box", "pads"));
      g_string_append_c (part, ' ');
      append_int64s (part, pads, all_equal (pads, n, pads[0]) ? 1 : n, ",");
      append_part (s, part->str);
    }
  const char *auto_pad = owb_node_get_string (node, "auto_pad", "NOTSET");
  if (strcmp (auto_pad, "NOTSET") != 0 && strcmp (auto_pad, "VALID") != 0)
    {
      g_string_assign (part, C_("graph box", "pad"));
      g_string_append_c (part, ' ');
      g_string_append (part, auto_pad);
      append_part (s, part->str);
    }
  const int64_t *dilations = owb_node_get_ints (node, "dilations", &n);
  if (dilations && n > 0 && !all_equal (dilations, n, 1))
    {
      g_string_assign (part, C_("graph box", "dilation"));
      g_string_append_c (part, ' ');
      append_int64s (part, dilations, all_equal (dilations, n, dilations[0]) ? 1 : n, "×");
      append_part (s, part->str);
    }
  int64_t group = owb_node_get_int (node, "group", 1);
  if (group != 1)
    {
      g_string_printf (part, "%s %" G_GINT64_FORMAT, C_("graph box", "group"), group);
      append_part (s, part->str);
    }
  if (s->len == 0)
    return NULL;
  return g_strdup (s->str);
}

/* One attribute as "name value", or NULL when it would not fit on a line. */
static char *
format_attribute (const OwbAttribute *a)
{
  GString *s = g_string_new (a->name);
  g_string_append_c (s, ' ');
  switch (a->type)
    {
    case OWB_ATTR_INT:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, a->i);
      break;
    case OWB_ATTR_FLOAT:
      append_double (s, a->f);
      break;
    case OWB_ATTR_STRING:
      if (a->s == NULL || !g_utf8_validate (a->s, a->s_len, NULL) || memchr (a->s, '\n', a->s_len))
        goto too_long;
      g_string_append_len (s, a->s, a->s_len);
      break;
    case OWB_ATTR_INTS:
      if (a->n > 6)
        goto too_long;
      append_int64s (s, a->ints, a->n, ",");
      break;
    case OWB_ATTR_FLOATS:
      if (a->n > 4)
        goto too_long;
      for (int i = 0; i < a->n; i++)
        {
          if (i)
            g_string_append_c (s, ',');
          append_double (s, a->floats[i]);
        }
      break;
    case OWB_ATTR_TENSOR:
      if (a->t)
        {
          g_autofree char *value = format_small_value (a->t);
          g_autofree char *shape = _owb_scene_format_tensor_shape (a->t);
          if (value)
            g_string_append (s, value);
          else
            g_string_append_printf (s, "⟨%s⟩", shape);
        }
      break;
    default:
      goto too_long;
    }
  if (g_utf8_strlen (s->str, -1) > MAX_ATTRIBUTE_TEXT)
    goto too_long;
  return g_string_free (s, FALSE);

too_long:
  g_string_free (s, TRUE);
  return NULL;
}

/* Short attributes packed a few per line, "alpha 0.2 · beta 1". */
static void
generic_lines (const OwbNode *node, GPtrArray *texts, GPtrArray *tensors)
{
  g_autoptr (GString) line = g_string_new (NULL);
  guint n = 0;
  for (int i = 0; i < node->n_attributes && n < 3; i++)
    {
      const OwbAttribute *a = &node->attributes[i];
      if (a->type == OWB_ATTR_GRAPH || a->type == OWB_ATTR_GRAPHS)
        continue;
      g_autofree char *text = format_attribute (a);
      if (text == NULL)
        continue;
      if (line->len && g_utf8_strlen (line->str, -1) + g_utf8_strlen (text, -1) > MAX_ATTRIBUTE_TEXT)
        {
          add_line (texts, tensors, g_strdup (line->str), NULL);
          g_string_truncate (line, 0);
          n++;
          if (n >= 3)
            break;
        }
      append_part (line, text);
    }
  if (line->len && n < 3)
    add_line (texts, tensors, g_strdup (line->str), NULL);
}

static guint
count_nodes (const OwbGraph *g)
{
  return g ? g->nodes->len : 0;
}

static void
key_attribute_lines (const OwbNode *node, const OwbGraph *graph, GPtrArray *texts, GPtrArray *tensors)
{
  const char *op = node->op_type;
  gboolean is_default_domain = node->domain == NULL || node->domain[0] == '\0'
                               || strcmp (node->domain, "ai.onnx") == 0;

  /* Subgraphs first: "body: 12 nodes" is the most important thing about a Loop. */
  for (int i = 0; i < node->n_attributes; i++)
    {
      const OwbAttribute *a = &node->attributes[i];
      if (a->type == OWB_ATTR_GRAPH)
        {
          guint n = count_nodes (a->g);
          add_line (texts, tensors,
                    g_strdup_printf (ngettext ("%s: %u node", "%s: %u nodes", n),
                                     a->name, n),
                    NULL);
        }
      else if (a->type == OWB_ATTR_GRAPHS)
        add_line (texts, tensors,
                  g_strdup_printf (ngettext ("%s: %d graph", "%s: %d graphs", a->n),
                                   a->name, a->n),
                  NULL);
    }

  if (strstr (op, "Conv") || strstr (op, "Pool") || strcmp (op, "Col2Im") == 0)
    {
      char *line = window_line (node, graph);
      if (line)
        add_line (texts, tensors, line, NULL);
      return;
    }
  if (is_default_domain && strcmp (op, "Gemm") == 0)
    {
      /* Only what differs from a plain A·B + C. */
      g_autoptr (GString) s = g_string_new (NULL);
      if (owb_node_get_int (node, "transA", 0))
        append_part (s, "transA");
      if (owb_node_get_int (node, "transB", 0))
        append_part (s, "transB");
      float alpha = owb_node_get_float (node, "alpha", 1.0f), beta = owb_node_get_float (node, "beta", 1.0f);
      g_autoptr (GString) part = g_string_new (NULL);
      if (alpha != 1.0f)
        {
          g_string_assign (part, "alpha ");
          append_double (part, alpha);
          append_part (s, part->str);
        }
      if (beta != 1.0f)
        {
          g_string_assign (part, "beta ");
          append_double (part, beta);
          append_part (s, part->str);
        }
      if (s->len)
        add_line (texts, tensors, g_strdup (s->str), NULL);
      return;
    }
  if (is_default_domain && strcmp (op, "Transpose") == 0)
    {
      int n;
      const int64_t *perm = owb_node_get_ints (node, "perm", &n);
      if (perm)
        {
          GString *s = g_string_new ("perm ");
          append_int64s (s, perm, n, ",");
          add_line (texts, tensors, g_string_free (s, FALSE), NULL);
        }
      return;
    }
  if (is_default_domain && (strcmp (op, "Cast") == 0 || strcmp (op, "CastLike") == 0))
    {
      int64_t to = owb_node_get_int (node, "to", 0);
      if (to > 0 && owb_data_type_is_valid ((int) to))
        /* TRANSLATORS: what a Cast converts to, "to float16" */
        add_line (texts, tensors, g_strdup_printf (C_("graph box", "to %s"), dtype_name ((OwbDataType) to)), NULL);
      return;
    }
  if (is_default_domain && strcmp (op, "Constant") == 0)
    {
      const OwbAttribute *value = owb_node_get_attribute (node, "value");
      if (value && value->type == OWB_ATTR_TENSOR && value->t)
        {
          g_autofree char *small = format_small_value (value->t);
          g_autofree char *shape = _owb_scene_format_tensor_shape (value->t);
          if (small)
            add_line (texts, tensors, g_strdup_printf ("= %s", small), NULL);
          else
            add_line (texts, tensors, g_strdup_printf ("⟨%s⟩ %s", shape, dtype_name (value->t->dtype)), NULL);
          return;
        }
      generic_lines (node, texts, tensors);
      return;
    }
  if (is_default_domain
      && (strcmp (op, "Concat") == 0 || strcmp (op, "Softmax") == 0 || strcmp (op, "LogSoftmax") == 0
          || strcmp (op, "Gather") == 0 || strcmp (op, "GatherElements") == 0 || strcmp (op, "Flatten") == 0
          || strcmp (op, "Split") == 0 || strcmp (op, "Hardmax") == 0 || strcmp (op, "ArgMax") == 0
          || strcmp (op, "ArgMin") == 0 || strcmp (op, "LayerNormalization") == 0))
    {
      const OwbAttribute *axis = owb_node_get_attribute (node, "axis");
      if (axis && axis->type == OWB_ATTR_INT)
        add_line (texts, tensors, g_strdup_printf ("axis %" G_GINT64_FORMAT, axis->i), NULL);
      /* The rest (epsilon, keepdims) only if short; axis stays first. */
      for (int i = 0; i < node->n_attributes; i++)
        {
          const OwbAttribute *a = &node->attributes[i];
          if (strcmp (a->name, "axis") == 0)
            continue;
          char *text = format_attribute (a);
          if (text)
            add_line (texts, tensors, text, NULL);
        }
      return;
    }
  generic_lines (node, texts, tensors);
}

/* "64×3×3×3" for a value typed along the scopes, NULL when its shape is not known. */
static char *
folded_shape (const OwbGraph *graph, const char *name)
{
  for (const OwbGraph *g = graph; g; g = g->parent)
    {
      const OwbValueInfo *info = owb_graph_find_value_info (g, name);
      if (!info || !info->has_type)
        continue;
      if (info->type.kind != OWB_VALUE_TENSOR || info->type.rank < 0)
        return NULL;
      if (info->type.rank == 0)
        return g_strdup (C_("graph type", "scalar"));
      GString *s = g_string_new (NULL);
      for (int i = 0; i < info->type.rank && i < OWB_MAX_RANK; i++)
        {
          if (i)
            g_string_append (s, "×");
          append_dim (s, info->type.dims[i], TRUE);
        }
      return g_string_free (s, FALSE);
    }
  return NULL;
}

guint
_owb_scene_node_lines (const OwbNode *node, const OwbGraph *graph, const OwbSceneStyle *style,
                       GHashTable *folded, OwbSceneLine **lines)
{
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) tensors = g_ptr_array_new ();

  key_attribute_lines (node, graph, texts, tensors);

  for (int i = 0; i < node->n_inputs; i++)
    {
      const char *name = node->inputs[i];
      if (name[0] == '\0')
        continue;
      OwbTensor *t = _owb_scene_find_initializer (graph, name);
      const OwbNode *producer = t == NULL && folded ? g_hash_table_lookup (folded, name) : NULL;
      if (t == NULL && producer == NULL)
        continue;
      g_autofree char *label = input_label (node, i);
      if (producer)
        {
          /* A folded Constant shows its value as a weight would; another folded op its shape
           * when known ("W ⟨64×3×3×3⟩"), else what makes it ("W ← Identity"). */
          const OwbAttribute *value = strcmp (producer->op_type, "Constant") == 0
                                        ? owb_node_get_attribute (producer, "value") : NULL;
          t = value && value->type == OWB_ATTR_TENSOR ? value->t : NULL;
          if (t == NULL)
            {
              g_autofree char *shape = folded_shape (graph, name);
              add_line (texts, tensors,
                        shape ? g_strdup_printf ("%s ⟨%s⟩", label, shape)
                              : g_strdup_printf ("%s ← %s", label, producer->op_type),
                        name);
              continue;
            }
        }
      g_autofree char *value = format_small_value (t);
      if (value)
        add_line (texts, tensors, g_strdup_printf ("%s = %s", label, value), name);
      else
        {
          g_autofree char *shape = _owb_scene_format_tensor_shape (t);
          add_line (texts, tensors, g_strdup_printf ("%s ⟨%s⟩", label, shape), name);
        }
    }

  guint n = texts->len;
  gboolean capped = style->max_lines > 0 && n > style->max_lines;
  guint shown = capped ? style->max_lines : n;
  guint total = shown + (capped ? 1 : 0);
  *lines = total ? g_new0 (OwbSceneLine, total) : NULL;
  for (guint i = 0; i < shown; i++)
    {
      (*lines)[i].text = g_steal_pointer (&texts->pdata[i]);
      (*lines)[i].tensor = g_strdup (tensors->pdata[i]);
    }
  /* The subgraph lines come first, one per graph attribute, in attribute order. */
  guint line = 0;
  for (int i = 0; i < node->n_attributes && line < shown; i++)
    {
      const OwbAttribute *a = &node->attributes[i];
      if (a->type == OWB_ATTR_GRAPH && a->g)
        (*lines)[line].subgraph = g_strdup (a->name);
      if (a->type == OWB_ATTR_GRAPH || a->type == OWB_ATTR_GRAPHS)
        line++;
    }
  if (capped)
    (*lines)[shown].text = g_strdup ("…");
  return total;
}
