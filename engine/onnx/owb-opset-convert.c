/* owb-opset-convert.c: upgrades a model's ai.onnx opset, rewriting the nodes whose meaning
 * changed between the two versions (attributes that became inputs, removed ops, new defaults). */
#include <owb/owb-model-io.h>
#include <owb/owb-error.h>
#include <owb/owb-validate.h>

#include <math.h>
#include <string.h>

/* The newest default-domain opset this converter has checked every change up to. */
#define MAX_TARGET 21

typedef struct {
  OwbModel *model;
  GHashTable *names; /* every value name in the model (all graphs), owned strings */
  guint counter;
  int from;          /* the model's opset before conversion */
  int target;
} Converter;

/* One node being converted; `version` is the opset whose change a rule applies. */
typedef struct {
  Converter *cv;
  OwbGraph *graph;
  OwbNode *node;
  int version;
  gboolean from_upsample; /* a Resize that was an Upsample: its scales are >= 1 by definition */
} Step;

/* ---- errors ---- */

static gboolean G_GNUC_PRINTF (3, 4)
fail (Step *st, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *why = g_strdup_vprintf (format, args);
  va_end (args);
  char *who = owb_node_describe (st->node);
  g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "%s: cannot convert from opset %d to %d (change of opset %d): %s",
               who, st->cv->from, st->cv->target, st->version, why);
  g_free (who);
  g_free (why);
  return FALSE;
}

/* ---- names ---- */

static void
collect_graph_names (GHashTable *names, const OwbGraph *graph)
{
  GPtrArray *lists[] = { graph->inputs, graph->outputs, graph->value_infos };
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l]->len; i++)
      g_hash_table_add (names, g_strdup (((OwbValueInfo *) g_ptr_array_index (lists[l], i))->name));
  for (guint i = 0; i < graph->initializer_names->len; i++)
    g_hash_table_add (names, g_strdup (g_ptr_array_index (graph->initializer_names, i)));
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, n);
      for (int i = 0; i < node->n_inputs; i++)
        g_hash_table_add (names, g_strdup (node->inputs[i]));
      for (int o = 0; o < node->n_outputs; o++)
        g_hash_table_add (names, g_strdup (node->outputs[o]));
      for (int a = 0; a < node->n_attributes; a++)
        {
          const OwbAttribute *attr = &node->attributes[a];
          if (attr->type == OWB_ATTR_GRAPH && attr->g)
            collect_graph_names (names, attr->g);
          for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
            collect_graph_names (names, attr->graphs[k]);
        }
    }
}

/* A name no value of the model has (subgraphs included, so that none is shadowed). Borrowed. */
static const char *
fresh_name (Converter *cv, const char *base)
{
  for (;;)
    {
      char *name = g_strdup_printf ("%s_opset%d_%u", base && base[0] ? base : "v", cv->target, ++cv->counter);
      if (!g_hash_table_contains (cv->names, name))
        {
          g_hash_table_add (cv->names, name);
          return name;
        }
      g_free (name);
    }
}

/* ---- types and constants (outer scopes included) ---- */

static gboolean
find_type (const OwbGraph *graph, const char *name, OwbValueType *type)
{
  for (; graph && name && name[0]; graph = graph->parent)
    {
      const OwbTensor *t = owb_graph_get_initializer (graph, name);
      if (t)
        {
          owb_tensor_get_value_type (t, type);
          return TRUE;
        }
      const OwbValueInfo *info = owb_graph_find_value_info (graph, name);
      if (info && info->has_type)
        {
          *type = info->type;
          return TRUE;
        }
    }
  return FALSE;
}

static int
find_rank (const OwbGraph *graph, const char *name)
{
  OwbValueType type;
  return find_type (graph, name, &type) && type.kind == OWB_VALUE_TENSOR ? type.rank : -1;
}

static OwbDataType
find_dtype (const OwbGraph *graph, const char *name)
{
  OwbValueType type;
  return find_type (graph, name, &type) && type.kind == OWB_VALUE_TENSOR ? type.dtype : OWB_TYPE_UNDEFINED;
}

/* The value of an initializer or a Constant node's `value`, borrowed; NULL when not constant. */
static const OwbTensor *
find_constant (const OwbGraph *graph, const char *name)
{
  for (; graph && name && name[0]; graph = graph->parent)
    {
      const OwbTensor *t = owb_graph_get_initializer (graph, name);
      if (t)
        return t;
      for (guint n = 0; n < graph->nodes->len; n++)
        {
          const OwbNode *node = g_ptr_array_index (graph->nodes, n);
          if (node->n_outputs == 1 && strcmp (node->outputs[0], name) == 0)
            {
              const OwbAttribute *value = owb_node_get_attribute (node, "value");
              if (strcmp (node->op_type, "Constant") == 0 && node->domain[0] == '\0' && value
                  && value->type == OWB_ATTR_TENSOR)
                return value->t;
              return NULL;
            }
        }
    }
  return NULL;
}

/* ---- editing ---- */

static void
remove_attribute (OwbNode *node, const char *name)
{
  for (int i = 0; i < node->n_attributes; i++)
    if (node->attributes[i].name && strcmp (node->attributes[i].name, name) == 0)
      {
        owb_attribute_clear (&node->attributes[i]);
        memmove (&node->attributes[i], &node->attributes[i + 1], (node->n_attributes - i - 1) * sizeof (OwbAttribute));
        node->n_attributes--;
        return;
      }
}

static void
set_output (OwbNode *node, int i, const char *name)
{
  g_free (node->outputs[i]);
  node->outputs[i] = g_strdup (name);
}

static void
set_int (OwbNode *node, const char *name, int64_t value)
{
  owb_node_add_attribute (node, name, OWB_ATTR_INT)->i = value;
}

static void
set_string (OwbNode *node, const char *name, const char *value)
{
  OwbAttribute *attr = owb_node_add_attribute (node, name, OWB_ATTR_STRING);
  attr->s = g_strdup (value);
  attr->s_len = strlen (value);
}

static void
set_ints (OwbNode *node, const char *name, int n, const int64_t *values)
{
  OwbAttribute *attr = owb_node_add_attribute (node, name, OWB_ATTR_INTS);
  attr->n = n;
  attr->ints = g_memdup2 (values, n * sizeof (int64_t));
}

static void
set_floats (OwbNode *node, const char *name, int n, const float *values)
{
  OwbAttribute *attr = owb_node_add_attribute (node, name, OWB_ATTR_FLOATS);
  attr->n = n;
  attr->floats = g_memdup2 (values, n * sizeof (float));
}

/* A new node placed in the graph at `anchor` (before it) or right after it; validation sorts
 * the graph anyway, this keeps file order readable. */
static OwbNode *
insert_node (Step *st, const char *op_type, gboolean after)
{
  char *name = g_strdup_printf ("%s/%s", st->node->name && st->node->name[0] ? st->node->name : st->node->op_type,
                                op_type);
  OwbNode *node = owb_node_new (op_type, "", name);
  g_free (name);
  node->graph = st->graph;
  guint index = 0;
  if (!g_ptr_array_find (st->graph->nodes, st->node, &index))
    index = st->graph->nodes->len;
  g_ptr_array_insert (st->graph->nodes, after ? index + 1 : index, node);
  return node;
}

/* A new initializer in the node's graph; returns its (borrowed) name. */
static const char *
add_constant (Step *st, const char *base, OwbTensor *tensor)
{
  const char *name = fresh_name (st->cv, base);
  owb_graph_add_initializer (st->graph, name, tensor);
  return name;
}

static const char *
add_int64s (Step *st, const char *base, int n, const int64_t *values)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  if (n > 0)
    memcpy (t->data, values, n * sizeof (int64_t));
  return add_constant (st, base, t);
}

static const char *
add_floats (Step *st, const char *base, int n, const float *values)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 1, dims, NULL);
  if (n > 0)
    memcpy (t->data, values, n * sizeof (float));
  return add_constant (st, base, t);
}

/* A rank-0 tensor of the element type of a value the node reads (min/max, pad values must
 * match the data's type from opset 11). */
static const char *
add_scalar (Step *st, const char *base, OwbDataType dtype, double value)
{
  OwbTensor *t = owb_tensor_new (dtype, 0, NULL, NULL);
  owb_tensor_set_double (t, 0, value);
  return add_constant (st, base, t);
}

/* Moves an ints attribute to input `index` as a 1-D int64 initializer. FALSE when absent. */
static gboolean
ints_attribute_to_input (Step *st, const char *attr_name, int index)
{
  const OwbAttribute *attr = owb_node_get_attribute (st->node, attr_name);
  if (!attr || attr->type != OWB_ATTR_INTS)
    return FALSE;
  const char *name = add_int64s (st, attr_name, attr->n, attr->ints);
  owb_node_set_input (st->node, index, name);
  remove_attribute (st->node, attr_name);
  return TRUE;
}

/* Unsqueeze(input, axes) in the form of the target opset; returns the (borrowed) output name. */
static const char *
add_unsqueeze (Step *st, const char *input, int n, const int64_t *axes)
{
  OwbNode *unsqueeze = insert_node (st, "Unsqueeze", FALSE);
  owb_node_add_input (unsqueeze, input);
  if (st->cv->target >= 13)
    owb_node_add_input (unsqueeze, add_int64s (st, "axes", n, axes));
  else
    set_ints (unsqueeze, "axes", n, axes);
  const char *out = fresh_name (st->cv, input);
  owb_node_add_output (unsqueeze, out);
  return out;
}

static gboolean
is_used_output (const OwbNode *node, int i)
{
  return i < node->n_outputs && node->outputs[i][0];
}

/* ---- rules, by the opset whose change they apply ---- */

typedef gboolean (*RuleFunc) (Step *st, GError **error);

/* Pad-1 called its pads `paddings`. */
static gboolean
pad_2 (Step *st, GError **error)
{
  const OwbAttribute *attr = owb_node_get_attribute (st->node, "paddings");
  if (attr && attr->type == OWB_ATTR_INTS && !owb_node_get_attribute (st->node, "pads"))
    {
      int n = attr->n;
      int64_t *pads = g_memdup2 (attr->ints, n * sizeof (int64_t));
      remove_attribute (st->node, "paddings");
      set_ints (st->node, "pads", n, pads);
      g_free (pads);
    }
  return TRUE;
}

/* Split-1 could also read the split sizes from a second input; Split-2 only has the attribute. */
static gboolean
split_2 (Step *st, GError **error)
{
  const char *split = owb_node_get_input (st->node, 1);
  if (st->node->n_inputs > 1)
    {
      if (split)
        {
          const OwbTensor *t = find_constant (st->graph, split);
          if (!t || t->rank != 1 || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32))
            return fail (st, error, "the split sizes (input '%s') are not a constant 1-D integer tensor", split);
          int64_t *sizes = g_new (int64_t, MAX (t->nelems, 1));
          for (int64_t i = 0; i < t->nelems; i++)
            sizes[i] = owb_tensor_get_int64 (t, i);
          set_ints (st->node, "split", (int) t->nelems, sizes);
          g_free (sizes);
        }
      while (st->node->n_inputs > 1)
        g_free (st->node->inputs[--st->node->n_inputs]);
    }
  return TRUE;
}

/* LpPool-1 and GlobalLpPool-1 had a float p; from 2 it is an int. */
static gboolean
lp_pool_2 (Step *st, GError **error)
{
  const OwbAttribute *attr = owb_node_get_attribute (st->node, "p");
  if (attr && attr->type == OWB_ATTR_FLOAT)
    {
      float p = attr->f;
      if (p != floorf (p) || fabsf (p) > 1e9f)
        return fail (st, error, "p = %g is not an integer", (double) p);
      set_int (st->node, "p", (int64_t) p);
    }
  return TRUE;
}

/* Concat-1 defaulted axis to 1; from 4 it is required. */
static gboolean
concat_4 (Step *st, GError **error)
{
  if (!owb_node_get_attribute (st->node, "axis"))
    set_int (st->node, "axis", 1);
  return TRUE;
}

static gboolean
reshape_5 (Step *st, GError **error)
{
  if (!ints_attribute_to_input (st, "shape", 1) && !owb_node_get_input (st->node, 1))
    return fail (st, error, "neither a 'shape' attribute nor a shape input");
  return TRUE;
}

/* Cast-1 named the target type as a string of TensorProto's DataType enum. */
static gboolean
cast_6 (Step *st, GError **error)
{
  static const struct { const char *name; OwbDataType type; } types[] = {
    { "FLOAT", OWB_TYPE_FLOAT },   { "UINT8", OWB_TYPE_UINT8 },         { "INT8", OWB_TYPE_INT8 },
    { "UINT16", OWB_TYPE_UINT16 }, { "INT16", OWB_TYPE_INT16 },         { "INT32", OWB_TYPE_INT32 },
    { "INT64", OWB_TYPE_INT64 },   { "STRING", OWB_TYPE_STRING },       { "BOOL", OWB_TYPE_BOOL },
    { "FLOAT16", OWB_TYPE_FLOAT16 }, { "DOUBLE", OWB_TYPE_DOUBLE },     { "UINT32", OWB_TYPE_UINT32 },
    { "UINT64", OWB_TYPE_UINT64 }, { "COMPLEX64", OWB_TYPE_COMPLEX64 }, { "COMPLEX128", OWB_TYPE_COMPLEX128 },
    { "BFLOAT16", OWB_TYPE_BFLOAT16 },
  };
  const OwbAttribute *to = owb_node_get_attribute (st->node, "to");
  if (!to || to->type != OWB_ATTR_STRING)
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (g_ascii_strcasecmp (to->s, types[i].name) == 0)
      {
        set_int (st->node, "to", types[i].type);
        return TRUE;
      }
  return fail (st, error, "unknown target type \"%s\"", to->s);
}

/* Tile-1 repeated along one axis (inputs tiles and axis); Tile-6 takes one count per axis. */
static gboolean
tile_6 (Step *st, GError **error)
{
  if (st->node->n_inputs != 3)
    return TRUE;
  const OwbTensor *tiles = find_constant (st->graph, owb_node_get_input (st->node, 1));
  const OwbTensor *axis = find_constant (st->graph, owb_node_get_input (st->node, 2));
  int rank = find_rank (st->graph, owb_node_get_input (st->node, 0));
  if (!tiles || !axis || tiles->nelems != 1 || axis->nelems != 1 || rank < 0)
    return fail (st, error, "tiles and axis must be constants and the input's rank known");
  int64_t a = owb_tensor_get_int64 (axis, 0);
  if (a < 0)
    a += rank;
  if (a < 0 || a >= rank)
    return fail (st, error, "axis %" G_GINT64_FORMAT " is out of range", owb_tensor_get_int64 (axis, 0));
  int64_t *repeats = g_new (int64_t, MAX (rank, 1));
  for (int i = 0; i < rank; i++)
    repeats[i] = i == a ? owb_tensor_get_int64 (tiles, 0) : 1;
  const char *name = add_int64s (st, "repeats", rank, repeats);
  g_free (repeats);
  owb_node_set_input (st->node, 1, name);
  g_free (st->node->inputs[2]);
  st->node->n_inputs = 2;
  return TRUE;
}

/* Before 7, binary ops broadcast only with broadcast=1: B's shape matched a contiguous run of A's
 * dims starting at `axis` (suffix matching without it, which numpy broadcasting also does).
 * Trailing 1s appended to B make numpy broadcasting line it up at the same place. */
static gboolean
legacy_broadcast_7 (Step *st, GError **error)
{
  gboolean broadcast = owb_node_get_int (st->node, "broadcast", 0) != 0;
  const OwbAttribute *axis_attr = owb_node_get_attribute (st->node, "axis");
  if (broadcast && axis_attr && axis_attr->type == OWB_ATTR_INT && st->node->n_inputs == 2)
    {
      const char *a = owb_node_get_input (st->node, 0), *b = owb_node_get_input (st->node, 1);
      int ra = find_rank (st->graph, a), rb = find_rank (st->graph, b);
      if (ra < 0 || rb < 0)
        return fail (st, error, "broadcasting at an axis needs the ranks of both inputs, which are unknown");
      int64_t axis = axis_attr->i < 0 ? axis_attr->i + ra : axis_attr->i;
      if (axis < 0 || axis + rb > ra)
        return fail (st, error, "B (rank %d) does not fit A (rank %d) at broadcast axis %" G_GINT64_FORMAT, rb, ra,
                     axis_attr->i);
      int count = (int) (ra - axis - rb);
      if (count > 0)
        {
          int64_t axes[OWB_MAX_RANK];
          for (int i = 0; i < count; i++)
            axes[i] = rb + i;
          owb_node_set_input (st->node, 1, add_unsqueeze (st, b, count, axes));
        }
    }
  remove_attribute (st->node, "broadcast");
  remove_attribute (st->node, "axis");
  return TRUE;
}

/* PRelu before 7 applied a 1-D slope of the channel count along axis 1; numpy broadcasting
 * would align it with the last axis. */
static gboolean
prelu_7 (Step *st, GError **error)
{
  const char *x = owb_node_get_input (st->node, 0), *slope = owb_node_get_input (st->node, 1);
  OwbValueType tx, ts;
  if (!find_type (st->graph, x, &tx) || !find_type (st->graph, slope, &ts) || tx.rank < 0 || ts.rank < 0)
    return fail (st, error, "the ranks of X and slope are unknown");
  if (ts.rank != 1 || tx.rank <= 2)
    return TRUE;
  if (ts.dims[0].value == 1)
    return TRUE;
  if (!owb_dim_is_known (ts.dims[0]) || !owb_dim_is_known (tx.dims[1]))
    return fail (st, error, "the slope length or the channel count is unknown");
  if (ts.dims[0].value != tx.dims[1].value)
    return TRUE;
  int64_t axes[OWB_MAX_RANK];
  for (int i = 0; i < tx.rank - 2; i++)
    axes[i] = 1 + i;
  owb_node_set_input (st->node, 1, add_unsqueeze (st, slope, tx.rank - 2, axes));
  return TRUE;
}

static gboolean
gemm_7 (Step *st, GError **error)
{
  remove_attribute (st->node, "broadcast");
  return TRUE;
}

/* is_test (opsets 1-6) is gone at 7: the mode then follows from the outputs present. */
static gboolean
batch_normalization_7 (Step *st, GError **error)
{
  gboolean extra = FALSE;
  for (int o = 1; o < st->node->n_outputs; o++)
    extra = extra || is_used_output (st->node, o);
  if (extra && owb_node_get_int (st->node, "is_test", 0) != 0)
    return fail (st, error, "is_test = 1 with statistics outputs, which would mean training from opset 7");
  remove_attribute (st->node, "is_test");
  return TRUE;
}

/* Dropout before 7: is_test only switched training off, and inference never trains. */
static gboolean
dropout_7 (Step *st, GError **error)
{
  remove_attribute (st->node, "is_test");
  return TRUE;
}

/* Upsample-1 (experimental) had height_scale/width_scale for NCHW and called linear "bilinear". */
static gboolean
upsample_7 (Step *st, GError **error)
{
  if (owb_node_get_attribute (st->node, "scales"))
    return TRUE;
  float scales[4] = { 1.0f, 1.0f, owb_node_get_float (st->node, "height_scale", 1.0f),
                      owb_node_get_float (st->node, "width_scale", 1.0f) };
  remove_attribute (st->node, "height_scale");
  remove_attribute (st->node, "width_scale");
  set_floats (st->node, "scales", 4, scales);
  if (strcmp (owb_node_get_string (st->node, "mode", "nearest"), "bilinear") == 0)
    set_string (st->node, "mode", "linear");
  return TRUE;
}

/* Non-spatial statistics (spatial = 0) have no form from 9 on short of reshaping around the op. */
static gboolean
batch_normalization_9 (Step *st, GError **error)
{
  if (owb_node_get_int (st->node, "spatial", 1) == 0)
    return fail (st, error, "spatial = 0 (one statistic per element) has no equivalent from opset 9");
  remove_attribute (st->node, "spatial");
  return TRUE;
}

/* Upsample-9 reads its scales from an input. */
static gboolean
upsample_9 (Step *st, GError **error)
{
  const OwbAttribute *attr = owb_node_get_attribute (st->node, "scales");
  if (!attr || attr->type != OWB_ATTR_FLOATS)
    return fail (st, error, "the 'scales' attribute is missing");
  owb_node_set_input (st->node, 1, add_floats (st, "scales", attr->n, attr->floats));
  remove_attribute (st->node, "scales");
  return TRUE;
}

/* Scan-8 had a batch axis and sequence_lens; Scan-9 has neither. */
static gboolean
scan_9 (Step *st, GError **error)
{
  return fail (st, error, "Scan-8's batch axis and sequence_lens have no Scan-9 equivalent");
}

static gboolean
slice_10 (Step *st, GError **error)
{
  if (!ints_attribute_to_input (st, "starts", 1) || !ints_attribute_to_input (st, "ends", 2))
    return fail (st, error, "the 'starts' or 'ends' attribute is missing");
  ints_attribute_to_input (st, "axes", 3);
  return TRUE;
}

static gboolean
topk_10 (Step *st, GError **error)
{
  const OwbAttribute *k = owb_node_get_attribute (st->node, "k");
  if (!k || k->type != OWB_ATTR_INT)
    return fail (st, error, "the 'k' attribute is missing");
  int64_t value = k->i;
  owb_node_set_input (st->node, 1, add_int64s (st, "k", 1, &value));
  remove_attribute (st->node, "k");
  return TRUE;
}

/* Upsample is deprecated at 10 for Resize-10, which has the same inputs and meaning. */
static gboolean
upsample_10 (Step *st, GError **error)
{
  g_free (st->node->op_type);
  st->node->op_type = g_strdup ("Resize");
  st->from_upsample = TRUE;
  return TRUE;
}

/* From 10 the mask is bool (it was of the data's type): a Cast keeps what readers see. */
static gboolean
dropout_10 (Step *st, GError **error)
{
  if (!is_used_output (st->node, 1))
    return TRUE;
  OwbDataType dtype = find_dtype (st->graph, owb_node_get_input (st->node, 0));
  if (dtype == OWB_TYPE_UNDEFINED)
    return fail (st, error, "the mask output is read but the data's element type is unknown");
  char *mask = g_strdup (st->node->outputs[1]);
  const char *bool_mask = fresh_name (st->cv, mask);
  set_output (st->node, 1, bool_mask);
  OwbNode *cast = insert_node (st, "Cast", TRUE);
  owb_node_add_input (cast, bool_mask);
  owb_node_add_output (cast, mask);
  set_int (cast, "to", dtype);
  g_free (mask);
  return TRUE;
}

/* Resize-10 (and Upsample) sample asymmetrically and, in nearest mode, round down when enlarging
 * and up when shrinking (what the engine and ONNX Runtime do for them). Resize-11 says so with
 * attributes; one nearest_mode serves all axes, so mixed directions cannot be expressed. */
static gboolean
resize_11 (Step *st, GError **error)
{
  const char *scales = owb_node_get_input (st->node, 1);
  if (!scales || st->node->n_inputs != 2)
    return fail (st, error, "expected the inputs X and scales");
  if (strcmp (owb_node_get_string (st->node, "mode", "nearest"), "nearest") == 0)
    {
      const char *rounding = "floor";
      const OwbTensor *t = find_constant (st->graph, scales);
      if (t)
        {
          gboolean shrinks = FALSE, grows = FALSE;
          for (int64_t i = 0; i < t->nelems; i++)
            {
              double s = owb_tensor_get_double (t, i);
              shrinks = shrinks || s < 1.0;
              grows = grows || s > 1.0;
            }
          if (shrinks && grows)
            return fail (st, error, "nearest resizing that shrinks some axes and enlarges others");
          if (shrinks)
            rounding = "ceil";
        }
      else if (!st->from_upsample)
        return fail (st, error, "nearest resizing with scales that are not constant (the rounding depends on them)");
      set_string (st->node, "nearest_mode", rounding);
    }
  set_string (st->node, "coordinate_transformation_mode", "asymmetric");
  char *scales_name = g_strdup (scales);
  /* roi is required at 11 and 12 (an empty tensor), optional from 13. */
  const char *roi = st->cv->target >= 13 ? "" : add_floats (st, "roi", 0, NULL);
  owb_node_set_input (st->node, 1, roi);
  owb_node_set_input (st->node, 2, scales_name);
  g_free (scales_name);
  return TRUE;
}

/* Clip-6's min/max defaulted to the float range: absent ones stay absent inputs. */
static gboolean
clip_11 (Step *st, GError **error)
{
  const OwbAttribute *min = owb_node_get_attribute (st->node, "min");
  const OwbAttribute *max = owb_node_get_attribute (st->node, "max");
  if (!min && !max)
    return TRUE;
  OwbDataType dtype = find_dtype (st->graph, owb_node_get_input (st->node, 0));
  if (dtype == OWB_TYPE_UNDEFINED)
    return fail (st, error, "the input's element type is unknown");
  float min_value = min ? min->f : 0, max_value = max ? max->f : 0;
  gboolean has_min = min != NULL, has_max = max != NULL;
  remove_attribute (st->node, "min");
  remove_attribute (st->node, "max");
  owb_node_set_input (st->node, 1, has_min ? add_scalar (st, "min", dtype, min_value) : "");
  if (has_max)
    owb_node_set_input (st->node, 2, add_scalar (st, "max", dtype, max_value));
  return TRUE;
}

static gboolean
pad_11 (Step *st, GError **error)
{
  const OwbAttribute *value = owb_node_get_attribute (st->node, "value");
  float v = value && value->type == OWB_ATTR_FLOAT ? value->f : 0.0f;
  if (!ints_attribute_to_input (st, "pads", 1))
    return fail (st, error, "the 'pads' attribute is missing");
  if (v != 0.0f)
    {
      OwbDataType dtype = find_dtype (st->graph, owb_node_get_input (st->node, 0));
      if (dtype == OWB_TYPE_UNDEFINED)
        return fail (st, error, "the data's element type is unknown");
      owb_node_set_input (st->node, 2, add_scalar (st, "constant_value", dtype, v));
    }
  remove_attribute (st->node, "value");
  return TRUE;
}

/* Scatter is deprecated at 11 for ScatterElements, the same op under another name. */
static gboolean
scatter_11 (Step *st, GError **error)
{
  g_free (st->node->op_type);
  st->node->op_type = g_strdup ("ScatterElements");
  return TRUE;
}

/* Dropout-12 reads ratio from an optional input. Inference ignores it, but it is kept (as a float
 * scalar) so that the converted model still says what it was trained with. */
static gboolean
dropout_12 (Step *st, GError **error)
{
  const OwbAttribute *ratio = owb_node_get_attribute (st->node, "ratio");
  if (!ratio)
    return TRUE;
  float value = ratio->type == OWB_ATTR_FLOAT ? ratio->f : 0.5f;
  remove_attribute (st->node, "ratio");
  OwbTensor *t = owb_tensor_new_scalar_float (value);
  owb_node_set_input (st->node, 1, add_constant (st, "ratio", t));
  return TRUE;
}

/* Before 13 Softmax, LogSoftmax and Hardmax worked on the input coerced to 2-D at `axis`
 * (default 1); from 13 along one axis (default -1). Both agree when axis is the last one;
 * otherwise Flatten(axis) -> op(axis=-1) -> Reshape(Shape(x)) computes the old meaning. */
static gboolean
softmax_13 (Step *st, GError **error)
{
  const char *x = owb_node_get_input (st->node, 0);
  int64_t axis = owb_node_get_int (st->node, "axis", 1);
  int rank = find_rank (st->graph, x);
  if (rank >= 0)
    {
      int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a > rank)
        return fail (st, error, "axis %" G_GINT64_FORMAT " is out of range for rank %d", axis, rank);
      if (a == rank - 1)
        {
          set_int (st->node, "axis", -1);
          return TRUE;
        }
    }
  if (!x || !is_used_output (st->node, 0))
    return fail (st, error, "the input or the output is missing");
  char *input = g_strdup (x), *output = g_strdup (st->node->outputs[0]);
  OwbNode *shape = insert_node (st, "Shape", FALSE);
  owb_node_add_input (shape, input);
  const char *shape_out = fresh_name (st->cv, "shape");
  owb_node_add_output (shape, shape_out);
  OwbNode *flatten = insert_node (st, "Flatten", FALSE);
  owb_node_add_input (flatten, input);
  set_int (flatten, "axis", axis);
  const char *flat = fresh_name (st->cv, input);
  owb_node_add_output (flatten, flat);
  owb_node_set_input (st->node, 0, flat);
  const char *result = fresh_name (st->cv, output);
  set_output (st->node, 0, result);
  set_int (st->node, "axis", -1);
  OwbNode *reshape = insert_node (st, "Reshape", TRUE);
  owb_node_add_input (reshape, result);
  owb_node_add_input (reshape, shape_out);
  owb_node_add_output (reshape, output);
  /* A 0 in the shape must stay a 0 (not "copy the flattened dim") when the input is empty. */
  if (st->cv->target >= 14)
    set_int (reshape, "allowzero", 1);
  g_free (input);
  g_free (output);
  return TRUE;
}

static gboolean
split_13 (Step *st, GError **error)
{
  ints_attribute_to_input (st, "split", 1);
  return TRUE;
}

/* Squeeze, Unsqueeze (13) and the Reduce ops (ReduceSum at 13, the others at 18) read axes from
 * an input. Absent axes stay absent: reducing over all axes is still the default. */
static gboolean
axes_to_input (Step *st, GError **error)
{
  if (!ints_attribute_to_input (st, "axes", 1) && strcmp (st->node->op_type, "Unsqueeze") == 0)
    return fail (st, error, "the 'axes' attribute is missing");
  return TRUE;
}

/* From 14 statistics outputs exist only with training_mode = 1, and they are other ones. */
static gboolean
batch_normalization_14 (Step *st, GError **error)
{
  for (int o = 1; o < st->node->n_outputs; o++)
    if (is_used_output (st->node, o))
      return fail (st, error, "training-mode statistics outputs have no equivalent from opset 14");
  while (st->node->n_outputs > 1)
    g_free (st->node->outputs[--st->node->n_outputs]);
  return TRUE;
}

/* Split-18 needs num_outputs when the sizes are not given. */
static gboolean
split_18 (Step *st, GError **error)
{
  if (!owb_node_get_input (st->node, 1) && !owb_node_get_attribute (st->node, "num_outputs"))
    set_int (st->node, "num_outputs", st->node->n_outputs);
  return TRUE;
}

/* GridSample-20 renamed the modes bilinear and bicubic to linear and cubic. */
static gboolean
grid_sample_20 (Step *st, GError **error)
{
  const char *mode = owb_node_get_string (st->node, "mode", "bilinear");
  if (strcmp (mode, "bilinear") == 0)
    set_string (st->node, "mode", "linear");
  else if (strcmp (mode, "bicubic") == 0)
    set_string (st->node, "mode", "cubic");
  return TRUE;
}

/* DFT-20 reads the axis from a scalar input, and its default moved from 1 to -2. */
static gboolean
dft_20 (Step *st, GError **error)
{
  int64_t axis = owb_node_get_int (st->node, "axis", 1);
  remove_attribute (st->node, "axis");
  owb_node_set_input (st->node, 2, add_constant (st, "axis", owb_tensor_new_scalar_int64 (axis)));
  return TRUE;
}

/* GroupNormalization-18 had one scale and bias per group, 21 one per channel: constant ones are
 * repeated over the channels of their group. */
static gboolean
group_normalization_21 (Step *st, GError **error)
{
  int64_t groups = owb_node_get_int (st->node, "num_groups", 0);
  OwbValueType tx;
  if (!find_type (st->graph, owb_node_get_input (st->node, 0), &tx) || tx.rank < 2 || !owb_dim_is_known (tx.dims[1]))
    return fail (st, error, "the channel count of X is unknown");
  int64_t channels = tx.dims[1].value;
  if (groups <= 0 || channels % groups != 0)
    return fail (st, error, "num_groups %" G_GINT64_FORMAT " does not divide %" G_GINT64_FORMAT " channels", groups,
                 channels);
  for (int i = 1; i <= 2; i++)
    {
      const char *name = owb_node_get_input (st->node, i);
      const OwbTensor *t = find_constant (st->graph, name);
      if (!t || t->rank != 1 || t->nelems != groups)
        return fail (st, error, "input '%s' is not a constant of one value per group", name ? name : "");
      OwbTensor *per_channel = owb_tensor_new (t->dtype, 1, &channels, NULL);
      for (int64_t c = 0; c < channels; c++)
        owb_tensor_set_double (per_channel, c, owb_tensor_get_double (t, c / (channels / groups)));
      owb_node_set_input (st->node, i, add_constant (st, name, per_channel));
    }
  return TRUE;
}

typedef struct {
  int version;
  const char *op_type;
  RuleFunc func;
} Rule;

/* In opset order: a node takes each rule of its current op for every version it passes. */
static const Rule rules[] = {
  { 2, "Pad", pad_2 },
  { 2, "Split", split_2 },
  { 2, "LpPool", lp_pool_2 },
  { 2, "GlobalLpPool", lp_pool_2 },
  { 4, "Concat", concat_4 },
  { 5, "Reshape", reshape_5 },
  { 6, "Cast", cast_6 },
  { 6, "Tile", tile_6 },
  { 7, "Add", legacy_broadcast_7 },
  { 7, "Sub", legacy_broadcast_7 },
  { 7, "Mul", legacy_broadcast_7 },
  { 7, "Div", legacy_broadcast_7 },
  { 7, "Pow", legacy_broadcast_7 },
  { 7, "And", legacy_broadcast_7 },
  { 7, "Or", legacy_broadcast_7 },
  { 7, "Xor", legacy_broadcast_7 },
  { 7, "Equal", legacy_broadcast_7 },
  { 7, "Greater", legacy_broadcast_7 },
  { 7, "Less", legacy_broadcast_7 },
  { 7, "PRelu", prelu_7 },
  { 7, "Gemm", gemm_7 },
  { 7, "BatchNormalization", batch_normalization_7 },
  { 7, "Dropout", dropout_7 },
  { 7, "Upsample", upsample_7 },
  { 9, "BatchNormalization", batch_normalization_9 },
  { 9, "Upsample", upsample_9 },
  { 9, "Scan", scan_9 },
  { 10, "Slice", slice_10 },
  { 10, "TopK", topk_10 },
  { 10, "Upsample", upsample_10 },
  { 10, "Dropout", dropout_10 },
  { 11, "Resize", resize_11 },
  { 11, "Clip", clip_11 },
  { 11, "Pad", pad_11 },
  { 11, "Scatter", scatter_11 },
  { 12, "Dropout", dropout_12 },
  { 13, "Softmax", softmax_13 },
  { 13, "LogSoftmax", softmax_13 },
  { 13, "Hardmax", softmax_13 },
  { 13, "Split", split_13 },
  { 13, "Squeeze", axes_to_input },
  { 13, "Unsqueeze", axes_to_input },
  { 13, "ReduceSum", axes_to_input },
  { 14, "BatchNormalization", batch_normalization_14 },
  { 18, "Split", split_18 },
  { 18, "ReduceMean", axes_to_input },
  { 18, "ReduceMax", axes_to_input },
  { 18, "ReduceMin", axes_to_input },
  { 18, "ReduceProd", axes_to_input },
  { 18, "ReduceL1", axes_to_input },
  { 18, "ReduceL2", axes_to_input },
  { 18, "ReduceLogSum", axes_to_input },
  { 18, "ReduceLogSumExp", axes_to_input },
  { 18, "ReduceSumSquare", axes_to_input },
  { 20, "GridSample", grid_sample_20 },
  { 20, "DFT", dft_20 },
  { 21, "GroupNormalization", group_normalization_21 },
};

static gboolean convert_graph (Converter *cv, OwbGraph *graph, GError **error);

static gboolean
convert_node (Converter *cv, OwbGraph *graph, OwbNode *node, GError **error)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g && !convert_graph (cv, attr->g, error))
        return FALSE;
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        if (!convert_graph (cv, attr->graphs[k], error))
          return FALSE;
    }
  if (node->domain[0] && strcmp (node->domain, "ai.onnx") != 0)
    return TRUE;
  Step st = { cv, graph, node, 0, FALSE };
  for (int version = cv->from + 1; version <= cv->target; version++)
    {
      st.version = version;
      /* consumed_inputs (a legacy optimisation hint of many opset-1 ops) is gone at 6. */
      if (version == 6)
        remove_attribute (node, "consumed_inputs");
      for (guint r = 0; r < G_N_ELEMENTS (rules); r++)
        if (rules[r].version == version && strcmp (rules[r].op_type, node->op_type) == 0
            && !rules[r].func (&st, error))
          return FALSE;
    }
  return TRUE;
}

static gboolean
convert_graph (Converter *cv, OwbGraph *graph, GError **error)
{
  /* Rules insert nodes: walk the nodes that were there before (borrowed, not owned). */
  GPtrArray *nodes = g_ptr_array_sized_new (graph->nodes->len);
  for (guint i = 0; i < graph->nodes->len; i++)
    g_ptr_array_add (nodes, g_ptr_array_index (graph->nodes, i));
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < nodes->len; i++)
    ok = convert_node (cv, graph, g_ptr_array_index (nodes, i), error);
  g_ptr_array_unref (nodes);
  return ok;
}

/* Points a graph and its subgraphs at the model that now owns them. */
static void
attach_to_model (OwbGraph *graph, OwbModel *model)
{
  graph->model = model;
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, n);
      for (int a = 0; a < node->n_attributes; a++)
        {
          OwbAttribute *attr = &node->attributes[a];
          if (attr->type == OWB_ATTR_GRAPH && attr->g)
            attach_to_model (attr->g, model);
          for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
            attach_to_model (attr->graphs[k], model);
        }
    }
}

gboolean
owb_model_convert_opset (OwbModel *model, int64_t target, GError **error)
{
  int64_t from = owb_model_get_opset (model, "");
  if (from < 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "the model imports no ai.onnx opset to convert");
      return FALSE;
    }
  if (target < from || target > MAX_TARGET)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "cannot convert opset %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                   ": only upgrades up to opset %d are supported",
                   from, target, MAX_TARGET);
      return FALSE;
    }
  if (target == from)
    return TRUE;
  /* Work on a copy of the IR (initializers are shared, never changed), so that a node without
   * an equivalent leaves the caller's model as it was. */
  g_autoptr (OwbModel) work = owb_model_dup (model);
  if (!owb_model_validate (work, error))
    return FALSE;
  /* Rules that depend on ranks or element types find them here; where inference fails they
   * report the unknown type themselves, so its error is not the conversion's. */
  g_autoptr (GError) infer_error = NULL;
  owb_model_infer_shapes (work, &infer_error);

  Converter cv = { work, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL), 0, (int) from, (int) target };
  collect_graph_names (cv.names, work->graph);
  gboolean ok = convert_graph (&cv, work->graph, error);
  g_hash_table_unref (cv.names);
  if (!ok)
    return FALSE;
  owb_model_set_opset (work, "", target);
  if (!owb_model_validate (work, error))
    return FALSE;
  OwbGraph *old = model->graph;
  model->graph = work->graph;
  work->graph = old;
  attach_to_model (model->graph, model);
  attach_to_model (work->graph, work);
  owb_model_set_opset (model, "", target);
  return TRUE;
}
