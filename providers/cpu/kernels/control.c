/* control.c: CPU kernels of If, Loop, Scan and the sequence and optional ops. Values are immutable
 * once produced, so containers, their elements and subgraph results are shared by reference. */
#include "../cpu-kernels-private.h"

#include <string.h>

/* ---- helpers ---- */

static const OwbGraph *
require_graph (OwbKernelContext *ctx, const char *name, GError **error)
{
  const OwbGraph *g = owb_node_get_graph (ctx->node, name);
  if (!g)
    owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "graph attribute '%s' is missing", name);
  return g;
}

/* Stores `value` (taken) as output i, dropping what the executor may have allocated there. */
static void
set_output (OwbKernelContext *ctx, int i, OwbTensor *value)
{
  if (i >= ctx->n_outputs)
    {
      owb_tensor_unref (value);
      return;
    }
  owb_tensor_unref (ctx->outputs[i]);
  ctx->outputs[i] = value;
}

/* Output i as a scalar of dtype: the one the executor allocated, or a new one. */
static OwbTensor *
scalar_output (OwbKernelContext *ctx, int i, OwbDataType dtype, GError **error)
{
  OwbTensor *o = ctx->outputs[i];
  if (o && o->kind == OWB_VALUE_TENSOR && o->dtype == dtype && o->rank == 0)
    return o;
  return owb_kernel_context_new_output (ctx, i, dtype, 0, NULL, error);
}

/* Copies n elements of src from src_off to dst from dst_off. */
static void
copy_elems (OwbTensor *dst, int64_t dst_off, const OwbTensor *src, int64_t src_off, int64_t n)
{
  gsize es = _owb_cpu_elem_size (dst->dtype);
  _owb_cpu_copy_elements ((char *) dst->data + dst_off * es, (const char *) src->data + src_off * es, n, es,
                          dst->dtype == OWB_TYPE_STRING);
}

static gboolean
check_tensor (OwbKernelContext *ctx, const OwbTensor *t, const char *what, GError **error)
{
  if (t && t->kind == OWB_VALUE_TENSOR)
    return TRUE;
  owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s must be a tensor", what);
  return FALSE;
}

static gboolean
read_bool (OwbKernelContext *ctx, const OwbTensor *t, const char *what, gboolean *out, GError **error)
{
  if (!t || t->kind != OWB_VALUE_TENSOR || t->dtype != OWB_TYPE_BOOL || t->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s must be a bool tensor of one element", what);
      return FALSE;
    }
  *out = ((const uint8_t *) t->data)[0] != 0;
  return TRUE;
}

static gboolean
read_index (OwbKernelContext *ctx, const OwbTensor *t, const char *what, int64_t *out, GError **error)
{
  if (!t || t->kind != OWB_VALUE_TENSOR || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32)
      || t->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s must be an int32 or int64 tensor of one element", what);
      return FALSE;
    }
  *out = owb_tensor_get_int64 (t, 0);
  return TRUE;
}

static OwbTensor *
bool_scalar (gboolean v)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_BOOL, 0, NULL, NULL);
  ((uint8_t *) t->data)[0] = v ? 1 : 0;
  return t;
}

static gboolean
check_sequence (OwbKernelContext *ctx, const OwbTensor *t, const char *what, GError **error)
{
  if (t && t->kind == OWB_VALUE_SEQUENCE && t->sequence)
    return TRUE;
  owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s must be a sequence", what);
  return FALSE;
}

/* Joins tensors along `axis` of the result; with `stack` each part first gets a new axis of
 * length 1 there. Every part must share the element type and all other dims. */
static OwbTensor *
join_tensors (OwbKernelContext *ctx, OwbTensor *const *parts, guint n, int axis, gboolean stack, const char *what,
              GError **error)
{
  g_assert (n > 0);
  const OwbTensor *first = parts[0];
  int rank = first->rank + (stack ? 1 : 0);
  if (rank > OWB_MAX_RANK || axis < 0 || axis >= rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s: cannot join elements of rank %d on axis %d", what,
                            first->rank, axis);
      return NULL;
    }
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0, src = 0; d < rank; d++)
    dims[d] = (stack && d == axis) ? 1 : first->dims[src++];
  dims[axis] = 0;
  for (guint p = 0; p < n; p++)
    {
      const OwbTensor *t = parts[p];
      gboolean ok = t->kind == OWB_VALUE_TENSOR && t->dtype == first->dtype && t->rank == first->rank;
      for (int d = 0; ok && d < t->rank; d++)
        if (t->dims[d] != first->dims[d] && (stack || d != axis))
          ok = FALSE;
      if (!ok)
        {
          g_autofree char *a = owb_tensor_shape_to_string (first);
          g_autofree char *b = owb_tensor_shape_to_string (t);
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s: element %u is %s, element 0 %s: they cannot be joined",
                                what, p, b, a);
          return NULL;
        }
      dims[axis] += stack ? 1 : t->dims[axis];
    }
  OwbTensor *out = owb_tensor_new_uninit (first->dtype, rank, dims, error);
  if (!out)
    return NULL;
  int64_t outer = 1;
  for (int d = 0; d < axis; d++)
    outer *= dims[d];
  if (outer == 0 || out->nelems == 0)
    return out;
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; o++)
    for (guint p = 0; p < n; p++)
      {
        int64_t block = parts[p]->nelems / outer;
        copy_elems (out, pos, parts[p], o * block, block);
        pos += block;
      }
  return out;
}

/* Index `index` of `x` along `axis`, that axis removed. Along axis 0 the result shares x's storage. */
static OwbTensor *
slice_along (const OwbTensor *x, int axis, int64_t index, GError **error)
{
  int64_t dims[OWB_MAX_RANK];
  int rank = 0;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < x->rank; d++)
    {
      if (d == axis)
        continue;
      dims[rank++] = x->dims[d];
      if (d < axis)
        outer *= x->dims[d];
      else
        inner *= x->dims[d];
    }
  if (axis == 0 && x->nelems > 0)
    return owb_tensor_new_wrap (x->dtype, rank, dims, (char *) x->data + index * inner * _owb_cpu_elem_size (x->dtype),
                                (GDestroyNotify) owb_tensor_unref, owb_tensor_ref ((OwbTensor *) x), error);
  OwbTensor *out = owb_tensor_new_uninit (x->dtype, rank, dims, error);
  if (!out)
    return NULL;
  int64_t len = x->dims[axis];
  for (int64_t o = 0; o < outer && inner > 0; o++)
    copy_elems (out, o * inner, x, (o * len + index) * inner, inner);
  return out;
}

/* The declared type of a subgraph output, or failing that of the node's output. */
static gboolean
declared_type (const OwbKernelContext *ctx, const OwbGraph *g, int g_output, int node_output, OwbValueType *type)
{
  if (g && g_output >= 0 && (guint) g_output < g->outputs->len)
    {
      const OwbValueInfo *info = g_ptr_array_index (g->outputs, g_output);
      if (info->has_type && info->type.dtype != OWB_TYPE_UNDEFINED)
        {
          *type = info->type;
          return TRUE;
        }
    }
  const char *name = node_output >= 0 ? owb_node_get_output (ctx->node, node_output) : NULL;
  const OwbValueInfo *info = name && ctx->node->graph ? owb_graph_find_value_info (ctx->node->graph, name) : NULL;
  if (info && info->has_type && info->type.dtype != OWB_TYPE_UNDEFINED)
    {
      *type = info->type;
      return TRUE;
    }
  return FALSE;
}

/* A scan output of zero iterations: shape `lead` (n_lead dims, inserted at `axis`) around the
 * per-iteration shape that the body declares (unknown dims taken as 0). */
static OwbTensor *
empty_scan_output (OwbKernelContext *ctx, const OwbGraph *body, int body_output, int node_output, int n_lead,
                   const int64_t *lead, int axis, GError **error)
{
  OwbValueType t;
  int64_t elem[OWB_MAX_RANK];
  int elem_rank = 0;
  OwbDataType dtype = OWB_TYPE_FLOAT;
  if (declared_type (ctx, body, body_output, -1, &t))
    {
      dtype = t.dtype;
      if (t.rank >= 0 && t.rank + n_lead <= OWB_MAX_RANK)
        {
          elem_rank = t.rank;
          for (int d = 0; d < t.rank; d++)
            elem[d] = owb_dim_is_known (t.dims[d]) ? t.dims[d].value : 0;
        }
    }
  else if (declared_type (ctx, NULL, -1, node_output, &t))
    dtype = t.dtype;
  if (axis < 0)
    axis += elem_rank + 1; /* scan_output_axes count from the end of the result's rank */
  if (axis < 0 || axis > elem_rank)
    axis = 0;
  int64_t dims[OWB_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < axis; d++)
    dims[rank++] = elem[d];
  for (int d = 0; d < n_lead; d++)
    dims[rank++] = lead[d];
  for (int d = axis; d < elem_rank; d++)
    dims[rank++] = elem[d];
  GError *local = NULL;
  OwbTensor *out = owb_tensor_new (dtype, rank, dims, &local);
  if (!out)
    {
      owb_kernel_set_error (ctx, error, local->code, "%s", local->message);
      g_error_free (local);
    }
  return out;
}

static void
free_arrays (GPtrArray **arrays, int n)
{
  for (int i = 0; arrays && i < n; i++)
    if (arrays[i])
      g_ptr_array_unref (arrays[i]);
  g_free (arrays);
}

static GPtrArray **
new_arrays (int n)
{
  GPtrArray **arrays = g_new0 (GPtrArray *, MAX (n, 1));
  for (int i = 0; i < n; i++)
    arrays[i] = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  return arrays;
}

static void
unref_all (OwbTensor **values, int n)
{
  for (int i = 0; values && i < n; i++)
    g_clear_pointer (&values[i], owb_tensor_unref);
}

/* ---- If ---- */

static gboolean
if_compute (OwbKernelContext *ctx, GError **error)
{
  gboolean cond;
  if (!read_bool (ctx, ctx->inputs[0], "cond", &cond, error))
    return FALSE;
  const OwbGraph *branch = require_graph (ctx, cond ? "then_branch" : "else_branch", error);
  if (!branch)
    return FALSE;
  if (branch->outputs->len != (guint) ctx->n_outputs)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s has %u outputs, the node %d",
                            cond ? "then_branch" : "else_branch", branch->outputs->len, ctx->n_outputs);
      return FALSE;
    }
  OwbTensor **outs = g_new0 (OwbTensor *, MAX (ctx->n_outputs, 1));
  gboolean ok = owb_kernel_context_run_subgraph (ctx, branch, 0, NULL, outs, error);
  for (int o = 0; ok && o < ctx->n_outputs; o++)
    {
      set_output (ctx, o, outs[o]);
      outs[o] = NULL;
    }
  unref_all (outs, ctx->n_outputs);
  g_free (outs);
  return ok;
}

/* ---- Loop ---- */

static gboolean
loop_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbGraph *body = require_graph (ctx, "body", error);
  if (!body)
    return FALSE;
  int n_carried = ctx->n_inputs - 2;
  int n_body_out = (int) body->outputs->len;
  int n_scan = n_body_out - 1 - n_carried;
  if (n_carried < 0 || n_scan < 0 || (int) body->inputs->len != n_carried + 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "body inputs and outputs do not match the node's");
      return FALSE;
    }
  int64_t max_trips = G_MAXINT64;
  gboolean cond = TRUE;
  if (ctx->inputs[0] && !read_index (ctx, ctx->inputs[0], "M", &max_trips, error))
    return FALSE;
  if (ctx->inputs[1] && !read_bool (ctx, ctx->inputs[1], "cond", &cond, error))
    return FALSE;
  for (int k = 0; k < n_carried; k++)
    if (!ctx->inputs[2 + k])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "loop-carried input %d is missing", k);
        return FALSE;
      }

  int n_body_in = n_carried + 2;
  OwbTensor **body_in = g_new0 (OwbTensor *, n_body_in);
  OwbTensor **body_out = g_new0 (OwbTensor *, MAX (n_body_out, 1));
  GPtrArray **scans = new_arrays (n_scan);
  for (int k = 0; k < n_carried; k++)
    body_in[2 + k] = owb_tensor_ref (ctx->inputs[2 + k]);
  gboolean ok = TRUE;
  gsize held = 0; /* bytes of the scan outputs kept so far */
  /* As ONNX Runtime and the reference implementation do, the body's condition is honoured even
   * when the node's cond input is absent. */
  for (int64_t i = 0; ok && i < max_trips && cond; i++)
    {
      /* The trip count and condition come from the model: an endless loop must still stop when
       * the run is cancelled, and one that piles up scan outputs at the memory limit. */
      if (!owb_kernel_context_check_interrupt (ctx, held, error))
        {
          ok = FALSE;
          break;
        }
      body_in[0] = owb_tensor_new_scalar_int64 (i);
      body_in[1] = bool_scalar (cond);
      ok = owb_kernel_context_run_subgraph (ctx, body, n_body_in, body_in, body_out, error);
      unref_all (body_in, 2);
      if (!ok)
        break;
      ok = read_bool (ctx, body_out[0], "the body's condition output", &cond, error);
      for (int k = 0; k < n_carried; k++)
        {
          owb_tensor_unref (body_in[2 + k]);
          body_in[2 + k] = g_steal_pointer (&body_out[1 + k]);
        }
      for (int j = 0; j < n_scan; j++)
        {
          OwbTensor *t = g_steal_pointer (&body_out[1 + n_carried + j]);
          if (ok && t->kind != OWB_VALUE_TENSOR)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "scan output %d of the body is not a tensor", j);
              ok = FALSE;
            }
          held += t->nbytes + sizeof (OwbTensor) + sizeof (gpointer); /* many tiny outputs cost their headers */
          g_ptr_array_add (scans[j], t);
        }
      unref_all (body_out, n_body_out);
    }
  for (int k = 0; ok && k < n_carried; k++)
    set_output (ctx, k, g_steal_pointer (&body_in[2 + k]));
  for (int j = 0; ok && j < n_scan; j++)
    {
      OwbTensor *t;
      if (scans[j]->len == 0)
        t = empty_scan_output (ctx, body, 1 + n_carried + j, n_carried + j, 1, (int64_t[]) { 0 }, 0, error);
      else
        t = join_tensors (ctx, (OwbTensor *const *) scans[j]->pdata, scans[j]->len, 0, TRUE, "scan output", error);
      if (!t)
        ok = FALSE;
      else
        set_output (ctx, n_carried + j, t);
    }
  unref_all (body_in, n_body_in);
  g_free (body_in);
  g_free (body_out);
  free_arrays (scans, n_scan);
  return ok;
}

/* ---- Scan ---- */

typedef struct {
  const OwbGraph *body;
  int n_states, n_scan_in, n_scan_out;
  int first; /* index of the first state input: 1 at opset 8 (after sequence_lens), else 0 */
} ScanShape;

static gboolean
scan_shape (OwbKernelContext *ctx, ScanShape *s, GError **error)
{
  s->body = require_graph (ctx, "body", error);
  if (!s->body)
    return FALSE;
  s->first = ctx->opset < 9 ? 1 : 0;
  int n_scan_in;
  if (!owb_node_get_int32 (ctx->node, "num_scan_inputs", -1, 1, MAX (ctx->n_inputs - s->first, 1), &n_scan_in, error))
    return FALSE;
  s->n_states = ctx->n_inputs - s->first - n_scan_in;
  s->n_scan_in = n_scan_in;
  s->n_scan_out = (int) s->body->outputs->len - s->n_states;
  if (n_scan_in < 1 || n_scan_in > ctx->n_inputs || s->n_states < 0 || s->n_scan_out < 0
      || (int) s->body->inputs->len != s->n_states + s->n_scan_in || ctx->n_outputs != (int) s->body->outputs->len)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "body inputs and outputs do not match the node's");
      return FALSE;
    }
  for (int i = s->first; i < ctx->n_inputs; i++)
    if (!check_tensor (ctx, ctx->inputs[i], "every state and scan input", error))
      return FALSE;
  return TRUE;
}

static const int64_t *
ints_attr (const OwbNode *node, const char *name, int n)
{
  int count;
  const int64_t *v = owb_node_get_ints (node, name, &count);
  return v && count == n ? v : NULL;
}

/* Runs the body over `len` steps. states[k] holds the running state (replaced, owned); scan
 * inputs are sliced from xs along axes[s] (dirs[s] 1: from the end); each step's scan outputs are
 * appended to scans[j]. */
static gboolean
scan_run (OwbKernelContext *ctx, const ScanShape *s, OwbTensor **states, OwbTensor *const *xs, const int *axes,
          const int64_t *dirs, int64_t len, GPtrArray **scans, GError **error)
{
  int n_in = s->n_states + s->n_scan_in, n_out = s->n_states + s->n_scan_out;
  OwbTensor **in = g_new0 (OwbTensor *, MAX (n_in, 1));
  OwbTensor **out = g_new0 (OwbTensor *, MAX (n_out, 1));
  gboolean ok = TRUE;
  for (int64_t t = 0; ok && t < len; t++)
    {
      for (int k = 0; k < s->n_states; k++)
        in[k] = states[k];
      for (int i = 0; ok && i < s->n_scan_in; i++)
        {
          int64_t index = dirs && dirs[i] ? len - 1 - t : t;
          GError *local = NULL;
          in[s->n_states + i] = slice_along (xs[i], axes ? axes[i] : 0, index, &local);
          if (!in[s->n_states + i])
            {
              owb_kernel_set_error (ctx, error, local->code, "scan input %d: %s", i, local->message);
              g_error_free (local);
              ok = FALSE;
            }
        }
      if (ok)
        ok = owb_kernel_context_run_subgraph (ctx, s->body, n_in, in, out, error);
      unref_all (in + s->n_states, s->n_scan_in);
      if (!ok)
        break;
      for (int k = 0; k < s->n_states; k++)
        {
          owb_tensor_unref (states[k]);
          states[k] = g_steal_pointer (&out[k]);
        }
      for (int j = 0; j < s->n_scan_out; j++)
        {
          OwbTensor *v = g_steal_pointer (&out[s->n_states + j]);
          if (ok && v->kind != OWB_VALUE_TENSOR)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "scan output %d of the body is not a tensor", j);
              ok = FALSE;
            }
          g_ptr_array_add (scans[j], v);
        }
    }
  g_free (in);
  g_free (out);
  return ok;
}

static gboolean
scan9_compute (OwbKernelContext *ctx, const ScanShape *s, GError **error)
{
  const int64_t *in_axes = ints_attr (ctx->node, "scan_input_axes", s->n_scan_in);
  const int64_t *in_dirs = ints_attr (ctx->node, "scan_input_directions", s->n_scan_in);
  const int64_t *out_axes = ints_attr (ctx->node, "scan_output_axes", s->n_scan_out);
  const int64_t *out_dirs = ints_attr (ctx->node, "scan_output_directions", s->n_scan_out);
  OwbTensor *const *xs = ctx->inputs + s->n_states;
  int *axes = g_new0 (int, MAX (s->n_scan_in, 1));
  int64_t len = -1;
  for (int i = 0; i < s->n_scan_in; i++)
    {
      int64_t a = in_axes ? in_axes[i] : 0;
      int r = xs[i]->rank;
      if (a < 0)
        a += r;
      if (a < 0 || a >= r)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scan input %d of rank %d has no axis %" G_GINT64_FORMAT, i,
                                r, in_axes ? in_axes[i] : 0);
          g_free (axes);
          return FALSE;
        }
      axes[i] = (int) a;
      if (len >= 0 && xs[i]->dims[a] != len)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "scan input %d has %" G_GINT64_FORMAT " steps, scan input 0 %" G_GINT64_FORMAT, i,
                                xs[i]->dims[a], len);
          g_free (axes);
          return FALSE;
        }
      len = xs[i]->dims[a];
    }
  OwbTensor **states = g_new0 (OwbTensor *, MAX (s->n_states, 1));
  for (int k = 0; k < s->n_states; k++)
    states[k] = owb_tensor_ref (ctx->inputs[k]);
  GPtrArray **scans = new_arrays (s->n_scan_out);
  gboolean ok = scan_run (ctx, s, states, xs, axes, in_dirs, len, scans, error);
  for (int k = 0; ok && k < s->n_states; k++)
    set_output (ctx, k, g_steal_pointer (&states[k]));
  for (int j = 0; ok && j < s->n_scan_out; j++)
    {
      GPtrArray *parts = scans[j];
      int64_t a = out_axes ? out_axes[j] : 0;
      OwbTensor *t;
      if (parts->len == 0)
        t = empty_scan_output (ctx, s->body, s->n_states + j, s->n_states + j, 1, (int64_t[]) { 0 }, (int) a, error);
      else
        {
          int r = ((OwbTensor *) parts->pdata[0])->rank + 1;
          if (a < 0)
            a += r;
          if (a < 0 || a >= r)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scan output %d of rank %d has no axis %" G_GINT64_FORMAT,
                                    j, r, out_axes[j]);
              ok = FALSE;
              break;
            }
          if (out_dirs && out_dirs[j])
            for (guint p = 0; p < parts->len / 2; p++)
              {
                gpointer tmp = parts->pdata[p];
                parts->pdata[p] = parts->pdata[parts->len - 1 - p];
                parts->pdata[parts->len - 1 - p] = tmp;
              }
          t = join_tensors (ctx, (OwbTensor *const *) parts->pdata, parts->len, (int) a, TRUE, "scan output", error);
        }
      if (!t)
        ok = FALSE;
      else
        set_output (ctx, s->n_states + j, t);
    }
  unref_all (states, s->n_states);
  g_free (states);
  g_free (axes);
  free_arrays (scans, s->n_scan_out);
  return ok;
}

/* Opset 8: every state and scan input has a leading batch axis, scan inputs scan their axis 1,
 * and sequence_lens may end some batch entries early (their scan outputs are zero-padded). */
static gboolean
scan8_compute (OwbKernelContext *ctx, const ScanShape *s, GError **error)
{
  const OwbTensor *lens = ctx->inputs[0];
  const int64_t *dirs = ints_attr (ctx->node, "directions", s->n_scan_in);
  OwbTensor *const *states_in = ctx->inputs + 1;
  OwbTensor *const *xs = ctx->inputs + 1 + s->n_states;
  int64_t batch = -1, max_len = -1;
  for (int i = 0; i < s->n_states + s->n_scan_in; i++)
    {
      const OwbTensor *t = states_in[i];
      gboolean scan = i >= s->n_states;
      if (t->rank < (scan ? 2 : 1) || (batch >= 0 && t->dims[0] != batch)
          || (scan && max_len >= 0 && t->dims[1] != max_len))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "input %d: every state needs the batch axis, every scan input batch and sequence "
                                "axes, of the same lengths",
                                i + 1);
          return FALSE;
        }
      batch = t->dims[0];
      if (scan)
        max_len = t->dims[1];
    }
  if (lens && (lens->kind != OWB_VALUE_TENSOR || (lens->dtype != OWB_TYPE_INT32 && lens->dtype != OWB_TYPE_INT64)
               || lens->nelems != batch))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "sequence_lens must hold %" G_GINT64_FORMAT " integers", batch);
      return FALSE;
    }
  if (batch == 0)
    {
      for (int k = 0; k < s->n_states; k++)
        set_output (ctx, k, owb_tensor_ref (states_in[k]));
      for (int j = 0; j < s->n_scan_out; j++)
        {
          OwbTensor *t = empty_scan_output (ctx, s->body, s->n_states + j, s->n_states + j, 2,
                                            (int64_t[]) { 0, max_len }, 0, error);
          if (!t)
            return FALSE;
          set_output (ctx, s->n_states + j, t);
        }
      return TRUE;
    }

  int n_per = s->n_states + s->n_scan_out;
  OwbTensor **per_batch = g_new0 (OwbTensor *, MAX (n_per, 1) * batch); /* [b * n_per + k] */
  OwbTensor **states = g_new0 (OwbTensor *, MAX (s->n_states, 1));
  OwbTensor **xb = g_new0 (OwbTensor *, MAX (s->n_scan_in, 1));
  GPtrArray **scans = new_arrays (s->n_scan_out);
  int64_t *len_of = g_new (int64_t, batch);
  OwbTensor **templates = g_new0 (OwbTensor *, MAX (s->n_scan_out, 1)); /* one step's shape per scan output */
  gboolean ok = TRUE;
  for (int64_t b = 0; ok && b < batch; b++)
    {
      int64_t len = lens ? owb_tensor_get_int64 (lens, b) : max_len;
      if (len < 0 || len > max_len)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "sequence_lens[%" G_GINT64_FORMAT "] = %" G_GINT64_FORMAT " is outside 0..%" G_GINT64_FORMAT,
                                b, len, max_len);
          ok = FALSE;
          break;
        }
      len_of[b] = len;
      for (int k = 0; ok && k < s->n_states; k++)
        ok = (states[k] = slice_along (states_in[k], 0, b, error)) != NULL;
      for (int i = 0; ok && i < s->n_scan_in; i++)
        ok = (xb[i] = slice_along (xs[i], 0, b, error)) != NULL;
      for (int j = 0; j < s->n_scan_out; j++)
        g_ptr_array_set_size (scans[j], 0);
      if (ok)
        ok = scan_run (ctx, s, states, xb, NULL, dirs, len, scans, error);
      unref_all (xb, s->n_scan_in);
      for (int k = 0; k < s->n_states; k++)
        per_batch[b * n_per + k] = g_steal_pointer (&states[k]);
      for (int j = 0; ok && j < s->n_scan_out; j++)
        {
          if (scans[j]->len == 0)
            continue;
          if (!templates[j])
            templates[j] = owb_tensor_ref (scans[j]->pdata[0]);
          /* Stack this entry's steps now; padding waits until the step shape is known. */
          OwbTensor *t = join_tensors (ctx, (OwbTensor *const *) scans[j]->pdata, scans[j]->len, 0, TRUE,
                                       "scan output", error);
          if (!t)
            ok = FALSE;
          per_batch[b * n_per + s->n_states + j] = t;
        }
    }
  for (int k = 0; ok && k < s->n_states; k++)
    {
      OwbTensor **parts = g_new (OwbTensor *, batch);
      for (int64_t b = 0; b < batch; b++)
        parts[b] = per_batch[b * n_per + k];
      OwbTensor *t = join_tensors (ctx, parts, (guint) batch, 0, TRUE, "state", error);
      g_free (parts);
      if (!t)
        ok = FALSE;
      else
        set_output (ctx, k, t);
    }
  for (int j = 0; ok && j < s->n_scan_out; j++)
    {
      OwbTensor *t;
      if (!templates[j])
        t = empty_scan_output (ctx, s->body, s->n_states + j, s->n_states + j, 2, (int64_t[]) { batch, max_len }, 0,
                               error);
      else
        {
          /* Each entry as [max_len, step...], zero rows after its own length. */
          OwbTensor *tpl = templates[j];
          int64_t dims[OWB_MAX_RANK];
          dims[0] = max_len;
          memcpy (dims + 1, tpl->dims, tpl->rank * sizeof (int64_t));
          OwbTensor **parts = g_new0 (OwbTensor *, batch);
          for (int64_t b = 0; ok && b < batch; b++)
            {
              OwbTensor *have = per_batch[b * n_per + s->n_states + j];
              if (have && len_of[b] == max_len)
                {
                  parts[b] = owb_tensor_ref (have);
                  continue;
                }
              parts[b] = owb_tensor_new (tpl->dtype, tpl->rank + 1, dims, error);
              if (!parts[b])
                {
                  ok = FALSE;
                  break;
                }
              if (have)
                {
                  if (have->rank != tpl->rank + 1 || have->nelems > parts[b]->nelems)
                    {
                      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scan output %d changes shape across the batch",
                                            j);
                      ok = FALSE;
                      break;
                    }
                  copy_elems (parts[b], 0, have, 0, have->nelems);
                }
            }
          t = ok ? join_tensors (ctx, parts, (guint) batch, 0, TRUE, "scan output", error) : NULL;
          unref_all (parts, (int) batch);
          g_free (parts);
        }
      if (!t)
        ok = FALSE;
      else
        set_output (ctx, s->n_states + j, t);
    }
  unref_all (per_batch, n_per * (int) batch);
  g_free (per_batch);
  unref_all (states, s->n_states);
  g_free (states);
  g_free (xb);
  free_arrays (scans, s->n_scan_out);
  unref_all (templates, s->n_scan_out);
  g_free (templates);
  g_free (len_of);
  return ok;
}

static gboolean
scan_compute (OwbKernelContext *ctx, GError **error)
{
  ScanShape s;
  if (!scan_shape (ctx, &s, error))
    return FALSE;
  return ctx->opset < 9 ? scan8_compute (ctx, &s, error) : scan9_compute (ctx, &s, error);
}

/* ---- sequences ---- */

static gboolean
sequence_construct_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *first = ctx->inputs[0];
  if (!check_tensor (ctx, first, "input 0", error))
    return FALSE;
  OwbTensor *seq = owb_tensor_new_sequence (first->dtype);
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      OwbTensor *t = ctx->inputs[i];
      if (!t || t->kind != OWB_VALUE_TENSOR || t->dtype != first->dtype)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is not a %s tensor like input 0", i,
                                owb_data_type_name (first->dtype));
          owb_tensor_unref (seq);
          return FALSE;
        }
      g_ptr_array_add (seq->sequence, owb_tensor_ref (t));
    }
  set_output (ctx, 0, seq);
  return TRUE;
}

static gboolean
sequence_empty_compute (OwbKernelContext *ctx, GError **error)
{
  int64_t dtype = owb_node_get_int (ctx->node, "dtype", OWB_TYPE_FLOAT);
  if (dtype <= 0 || dtype > G_MAXINT || !owb_data_type_is_valid ((int) dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "dtype %" G_GINT64_FORMAT " is not an element type",
                            dtype);
      return FALSE;
    }
  set_output (ctx, 0, owb_tensor_new_sequence ((OwbDataType) dtype));
  return TRUE;
}

/* Reads an optional position input, normalised into [0, n + extra) (extra 1 lets an insert append). */
static gboolean
read_position (OwbKernelContext *ctx, int input, int64_t n, int64_t fallback, int extra, int64_t *pos,
               GError **error)
{
  const OwbTensor *t = input < ctx->n_inputs ? ctx->inputs[input] : NULL;
  int64_t p = fallback;
  if (t && !read_index (ctx, t, "position", &p, error))
    return FALSE;
  int64_t given = p;
  if (p < 0)
    p += n;
  if (p < 0 || p >= n + extra)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                            "position %" G_GINT64_FORMAT " is out of range for a sequence of %" G_GINT64_FORMAT
                            " elements",
                            given, n);
      return FALSE;
    }
  *pos = p;
  return TRUE;
}

static OwbTensor *
sequence_copy (const OwbTensor *seq, OwbDataType dtype)
{
  OwbTensor *out = owb_tensor_new_sequence (dtype);
  for (guint i = 0; i < seq->sequence->len; i++)
    g_ptr_array_add (out->sequence, owb_tensor_ref (g_ptr_array_index (seq->sequence, i)));
  return out;
}

static gboolean
sequence_insert_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *seq = ctx->inputs[0];
  OwbTensor *t = ctx->inputs[1];
  if (!check_sequence (ctx, seq, "input_sequence", error) || !check_tensor (ctx, t, "tensor", error))
    return FALSE;
  if (seq->dtype != OWB_TYPE_UNDEFINED && seq->dtype != t->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cannot insert a %s tensor into a sequence of %s",
                            owb_data_type_name (t->dtype), owb_data_type_name (seq->dtype));
      return FALSE;
    }
  int64_t n = seq->sequence->len, pos;
  if (!read_position (ctx, 2, n, n, 1, &pos, error))
    return FALSE;
  OwbTensor *out = sequence_copy (seq, t->dtype);
  g_ptr_array_insert (out->sequence, (gint) pos, owb_tensor_ref (t));
  set_output (ctx, 0, out);
  return TRUE;
}

static gboolean
sequence_erase_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *seq = ctx->inputs[0];
  if (!check_sequence (ctx, seq, "input_sequence", error))
    return FALSE;
  int64_t pos;
  if (!read_position (ctx, 1, seq->sequence->len, -1, 0, &pos, error))
    return FALSE;
  OwbTensor *out = sequence_copy (seq, seq->dtype);
  g_ptr_array_remove_index (out->sequence, (guint) pos);
  set_output (ctx, 0, out);
  return TRUE;
}

static gboolean
sequence_at_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *seq = ctx->inputs[0];
  if (!check_sequence (ctx, seq, "input_sequence", error))
    return FALSE;
  int64_t pos;
  if (!ctx->inputs[1])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "position is required");
      return FALSE;
    }
  if (!read_position (ctx, 1, seq->sequence->len, 0, 0, &pos, error))
    return FALSE;
  set_output (ctx, 0, owb_tensor_ref (g_ptr_array_index (seq->sequence, pos)));
  return TRUE;
}

static gboolean
sequence_length_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *seq = ctx->inputs[0];
  if (!check_sequence (ctx, seq, "input_sequence", error))
    return FALSE;
  OwbTensor *out = scalar_output (ctx, 0, OWB_TYPE_INT64, error);
  if (!out)
    return FALSE;
  *(int64_t *) out->data = seq->sequence->len;
  return TRUE;
}

static gboolean
split_to_sequence_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  const OwbTensor *split = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (!check_tensor (ctx, x, "input", error))
    return FALSE;
  int64_t keepdims = owb_node_get_int (ctx->node, "keepdims", 1);
  int axis;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), x->rank, &axis, error))
    return FALSE;
  int64_t dim = x->dims[axis];
  g_autofree int64_t *sizes = NULL;
  int64_t n = 0;
  gboolean squeeze = FALSE;
  if (!split)
    {
      n = dim;
      sizes = g_new (int64_t, MAX (n, 1));
      for (int64_t i = 0; i < n; i++)
        sizes[i] = 1;
      squeeze = !keepdims;
    }
  else
    {
      if (split->kind != OWB_VALUE_TENSOR || (split->dtype != OWB_TYPE_INT32 && split->dtype != OWB_TYPE_INT64)
          || split->rank > 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "split must be an int32 or int64 scalar or 1-D tensor");
          return FALSE;
        }
      if (split->rank == 0)
        {
          int64_t chunk = owb_tensor_get_int64 (split, 0);
          if (chunk <= 0)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                    "split %" G_GINT64_FORMAT " must be positive", chunk);
              return FALSE;
            }
          n = dim / chunk + (dim % chunk ? 1 : 0);
          sizes = g_new (int64_t, MAX (n, 1));
          for (int64_t i = 0; i < n; i++)
            sizes[i] = MIN (chunk, dim - i * chunk);
        }
      else
        {
          n = split->nelems;
          sizes = g_new (int64_t, MAX (n, 1));
          int64_t total = 0;
          for (int64_t i = 0; i < n; i++)
            {
              sizes[i] = owb_tensor_get_int64 (split, i);
              if (sizes[i] < 0 || sizes[i] > dim - total)
                {
                  owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                        "split sizes must be non-negative and add up to %" G_GINT64_FORMAT, dim);
                  return FALSE;
                }
              total += sizes[i];
            }
          if (total != dim)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                    "split sizes add up to %" G_GINT64_FORMAT ", axis %d has %" G_GINT64_FORMAT, total,
                                    axis, dim);
              return FALSE;
            }
        }
    }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= x->dims[d];
  for (int d = (int) axis + 1; d < x->rank; d++)
    inner *= x->dims[d];
  OwbTensor *seq = owb_tensor_new_sequence (x->dtype);
  int64_t start = 0;
  for (int64_t i = 0; i < n; i++)
    {
      int64_t dims[OWB_MAX_RANK];
      int rank = 0;
      for (int d = 0; d < x->rank; d++)
        {
          if (d == axis && squeeze)
            continue;
          dims[rank++] = d == axis ? sizes[i] : x->dims[d];
        }
      OwbTensor *part = owb_tensor_new_uninit (x->dtype, rank, dims, error);
      if (!part)
        {
          owb_tensor_unref (seq);
          return FALSE;
        }
      int64_t block = sizes[i] * inner;
      for (int64_t o = 0; o < outer && block > 0; o++)
        copy_elems (part, o * block, x, (o * dim + start) * inner, block);
      start += sizes[i];
      g_ptr_array_add (seq->sequence, part);
    }
  set_output (ctx, 0, seq);
  return TRUE;
}

static gboolean
concat_from_sequence_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *seq = ctx->inputs[0];
  if (!check_sequence (ctx, seq, "input_sequence", error))
    return FALSE;
  int64_t new_axis = owb_node_get_int (ctx->node, "new_axis", 0);
  int64_t axis = owb_node_get_int (ctx->node, "axis", 0);
  if (seq->sequence->len == 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "cannot concatenate an empty sequence");
      return FALSE;
    }
  const OwbTensor *first = g_ptr_array_index (seq->sequence, 0);
  int rank = first->rank + (new_axis ? 1 : 0);
  int a;
  if (!_owb_cpu_normalize_axis (ctx, axis, rank, &a, error))
    return FALSE;
  axis = a;
  OwbTensor *out = join_tensors (ctx, (OwbTensor *const *) seq->sequence->pdata, seq->sequence->len, (int) axis,
                                 new_axis != 0, "sequence", error);
  if (!out)
    return FALSE;
  set_output (ctx, 0, out);
  return TRUE;
}

static gboolean
sequence_map_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbGraph *body = require_graph (ctx, "body", error);
  if (!body)
    return FALSE;
  if ((int) body->inputs->len != ctx->n_inputs || (int) body->outputs->len != ctx->n_outputs)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "body inputs and outputs do not match the node's");
      return FALSE;
    }
  if (!check_sequence (ctx, ctx->inputs[0], "input_sequence", error))
    return FALSE;
  guint n = ctx->inputs[0]->sequence->len;
  for (int i = 1; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      if (!t)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is missing", i);
          return FALSE;
        }
      if (t->kind == OWB_VALUE_SEQUENCE && t->sequence->len != n)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "sequence input %d has %u elements, input 0 %u", i,
                                t->sequence->len, n);
          return FALSE;
        }
    }
  OwbTensor **in = g_new0 (OwbTensor *, MAX (ctx->n_inputs, 1));
  OwbTensor **out = g_new0 (OwbTensor *, MAX (ctx->n_outputs, 1));
  OwbTensor **seqs = g_new0 (OwbTensor *, MAX (ctx->n_outputs, 1));
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      OwbValueType t;
      seqs[o] = owb_tensor_new_sequence (declared_type (ctx, body, o, o, &t) ? t.dtype : OWB_TYPE_UNDEFINED);
    }
  gboolean ok = TRUE;
  for (guint e = 0; ok && e < n; e++)
    {
      for (int i = 0; i < ctx->n_inputs; i++)
        {
          OwbTensor *t = ctx->inputs[i];
          in[i] = t->kind == OWB_VALUE_SEQUENCE ? g_ptr_array_index (t->sequence, e) : t;
        }
      ok = owb_kernel_context_run_subgraph (ctx, body, ctx->n_inputs, in, out, error);
      for (int o = 0; ok && o < ctx->n_outputs; o++)
        {
          if (out[o]->kind != OWB_VALUE_TENSOR)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "body output %d is not a tensor", o);
              ok = FALSE;
              break;
            }
          seqs[o]->dtype = out[o]->dtype;
          g_ptr_array_add (seqs[o]->sequence, g_steal_pointer (&out[o]));
        }
      unref_all (out, ctx->n_outputs);
    }
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      if (ok && seqs[o]->dtype == OWB_TYPE_UNDEFINED)
        seqs[o]->dtype = OWB_TYPE_FLOAT;
      if (ok)
        set_output (ctx, o, g_steal_pointer (&seqs[o]));
    }
  unref_all (seqs, ctx->n_outputs);
  g_free (seqs);
  g_free (in);
  g_free (out);
  return ok;
}

/* ---- optionals ---- */

static OwbTensor *
optional_new (OwbDataType dtype, OwbTensor *element)
{
  /* An optional is a sequence of zero or one element, marked by its kind. */
  OwbTensor *opt = owb_tensor_new_sequence (dtype);
  opt->kind = OWB_VALUE_OPTIONAL;
  if (element)
    g_ptr_array_add (opt->sequence, element);
  return opt;
}

static gboolean
optional_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *in = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
  if (in)
    {
      if (in->kind != OWB_VALUE_TENSOR && in->kind != OWB_VALUE_SEQUENCE)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "the input must be a tensor or a sequence");
          return FALSE;
        }
      set_output (ctx, 0, optional_new (in->dtype, owb_tensor_ref (in)));
      return TRUE;
    }
  const OwbAttribute *tp = owb_node_get_attribute (ctx->node, "type");
  if (!tp || tp->type != OWB_ATTR_TYPE_PROTO)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "an Optional without input needs the 'type' attribute");
      return FALSE;
    }
  set_output (ctx, 0, optional_new (tp->tp.dtype, NULL));
  return TRUE;
}

static gboolean
optional_has_element_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
  gboolean has = in && (in->kind != OWB_VALUE_OPTIONAL || (in->sequence && in->sequence->len > 0));
  OwbTensor *out = scalar_output (ctx, 0, OWB_TYPE_BOOL, error);
  if (!out)
    return FALSE;
  ((uint8_t *) out->data)[0] = has ? 1 : 0;
  return TRUE;
}

/* Whether the node's input i is declared optional(tensor) in its graph. */
static gboolean
declared_optional_tensor (const OwbKernelContext *ctx, int i)
{
  const char *name = owb_node_get_input (ctx->node, i);
  const OwbGraph *g = ctx->node->graph;
  for (; name && g; g = g->parent)
    {
      const OwbValueInfo *info = owb_graph_find_value_info (g, name);
      if (info)
        return info->has_type && info->type.kind == OWB_VALUE_OPTIONAL && info->type.elem_kind == OWB_VALUE_TENSOR;
    }
  return FALSE;
}

static gboolean
optional_get_element_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *in = ctx->inputs[0];
  /* An optional tensor and a one-element sequence are the same bytes in a .pb file, so a fed
   * optional(tensor) may arrive as a sequence: the declaration says which it is. */
  if (in->kind == OWB_VALUE_SEQUENCE && in->sequence->len <= 1 && declared_optional_tensor (ctx, 0))
    {
      if (in->sequence->len == 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "the optional input is empty");
          return FALSE;
        }
      set_output (ctx, 0, owb_tensor_ref (g_ptr_array_index (in->sequence, 0)));
      return TRUE;
    }
  if (in->kind != OWB_VALUE_OPTIONAL)
    {
      set_output (ctx, 0, owb_tensor_ref (in));
      return TRUE;
    }
  if (!in->sequence || in->sequence->len == 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "the optional input is empty");
      return FALSE;
    }
  set_output (ctx, 0, owb_tensor_ref (g_ptr_array_index (in->sequence, 0)));
  return TRUE;
}

const OwbKernelDef _owb_cpu_kernels_control[] = {
  { "If", "", 1, 0, 0, 0, NULL, NULL, if_compute },
  { "Loop", "", 1, 0, 0, 0, NULL, NULL, loop_compute },
  { "Scan", "", 8, 0, 0, 0, NULL, NULL, scan_compute },
  { "SequenceConstruct", "", 11, 0, 0, 0, NULL, NULL, sequence_construct_compute },
  { "SequenceEmpty", "", 11, 0, 0, 0, NULL, NULL, sequence_empty_compute },
  { "SequenceInsert", "", 11, 0, 0, 0, NULL, NULL, sequence_insert_compute },
  { "SequenceErase", "", 11, 0, 0, 0, NULL, NULL, sequence_erase_compute },
  { "SequenceAt", "", 11, 0, 0, 0, NULL, NULL, sequence_at_compute },
  { "SequenceLength", "", 11, 0, 0, 0, NULL, NULL, sequence_length_compute },
  { "SplitToSequence", "", 11, 0, 0, 0, NULL, NULL, split_to_sequence_compute },
  { "ConcatFromSequence", "", 11, 0, 0, 0, NULL, NULL, concat_from_sequence_compute },
  { "SequenceMap", "", 17, 0, 0, 0, NULL, NULL, sequence_map_compute },
  { "Optional", "", 15, 0, 0, 0, NULL, NULL, optional_compute },
  { "OptionalHasElement", "", 15, 0, 0, 0, NULL, NULL, optional_has_element_compute },
  { "OptionalGetElement", "", 15, 0, 0, 0, NULL, NULL, optional_get_element_compute },
  { NULL }
};
