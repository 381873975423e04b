/* resize.c: Resize (opset 11 on) of the last two axes, nearest or linear, with the coordinate
 * modes the CPU has except tf_crop_and_resize. The host maps every output row and column to its
 * two input taps and weights with the CPU kernel's coordinate math (owb-resize-coordinate-private.h),
 * in double; the device only gathers. Cubic, antialias, exclude_outside and aspect-ratio policies
 * are declined, as are resizes of other axes (at run time, when the scales are known). */
#include "../cuda-private.h"
#include "../../owb-resize-coordinate-private.h"

#include <math.h>
#include <string.h>

static const char *const coord_names[] = OWB_RESIZE_COORD_NAMES;
static const char *const nearest_names[] = OWB_RESIZE_NEAREST_NAMES;

static int
find_name (const char *const *names, const char *v)
{
  for (int i = 0; names[i]; i++)
    if (strcmp (names[i], v) == 0)
      return i;
  return -1;
}

/* Two taps per output index of one axis. */
static void
axis_table (gboolean linear, OwbResizeCoord coord, OwbResizeNearest nearest, int64_t in, int64_t out, double scale,
            int64_t *idx, float *w)
{
  gboolean identity = fabs (scale - 1.0) <= 1e-9 && in == out;
  for (int64_t y = 0; y < out; y++)
    {
      double x = identity ? (double) y : _owb_resize_coordinate (coord, (double) y, scale, in, out, 0, 1, FALSE);
      x = _owb_resize_bound (x);
      if (!linear)
        {
          idx[2 * y] = idx[2 * y + 1] = _owb_resize_nearest_index (nearest, x, scale, in);
          w[2 * y] = 1.0f;
          w[2 * y + 1] = 0.0f;
          continue;
        }
      double base = floor (x), ratio = x - base;
      idx[2 * y] = _owb_resize_clamp_index (base, in);
      idx[2 * y + 1] = _owb_resize_clamp_index (base + 1, in);
      w[2 * y] = (float) (1 - ratio);
      w[2 * y + 1] = (float) ratio;
    }
}

static gboolean
compute_resize (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  const OwbTensor *sc = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *sz = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  int r = x->rank;
  if (r < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must have rank 1 or more");
      return FALSE;
    }
  gboolean linear = strcmp (owb_node_get_string (ctx->node, "mode", "nearest"), "linear") == 0;
  OwbResizeCoord coord = (OwbResizeCoord) find_name (coord_names, owb_node_get_string (ctx->node, "coordinate_transformation_mode", "half_pixel"));
  OwbResizeNearest nearest = (OwbResizeNearest) find_name (nearest_names, owb_node_get_string (ctx->node, "nearest_mode", "round_prefer_floor"));
  int axes[OWB_MAX_RANK], n_axes = r;
  for (int d = 0; d < r; d++)
    axes[d] = d;
  int na = 0;
  const int64_t *a = ctx->opset >= 18 ? owb_node_get_ints (ctx->node, "axes", &na) : NULL;
  if (a)
    {
      n_axes = na;
      for (int k = 0; k < na; k++)
        axes[k] = (int) (a[k] < 0 ? a[k] + r : a[k]);
    }
  double scales[OWB_MAX_RANK];
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0; d < r; d++)
    {
      scales[d] = 1.0;
      dims[d] = x->dims[d];
    }
  if (sc && sc->nelems == 0)
    sc = NULL;
  if (sz && sz->nelems == 0)
    sz = NULL;
  if ((sc && sc->nelems != n_axes) || (sz && sz->nelems != n_axes) || (!sc && !sz))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "one of 'scales' and 'sizes' must give a value per axis");
      return FALSE;
    }
  for (int k = 0; k < n_axes; k++)
    {
      int d = axes[k];
      if (d < 0 || d >= r)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis out of range");
          return FALSE;
        }
      if (sc)
        {
          scales[d] = owb_tensor_get_double (sc, k);
          dims[d] = (int64_t) floor ((double) x->dims[d] * scales[d]);
        }
      else
        {
          dims[d] = owb_tensor_get_int64 (sz, k);
          scales[d] = (double) dims[d] / (double) x->dims[d];
        }
      if (!(scales[d] > 0) || !isfinite (scales[d]))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g for axis %d is not positive", scales[d], d);
          return FALSE;
        }
    }
  /* The session's inferred output shape, when it made one, is the one to keep. */
  if (ctx->outputs[0] && ctx->outputs[0]->rank == r)
    memcpy (dims, ctx->outputs[0]->dims, sizeof (int64_t) * r);
  for (int d = 0; d < r - 2; d++)
    if (dims[d] != x->dims[d] || fabs (scales[d] - 1.0) > 1e-9)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "the CUDA Resize resamples only the last two axes, not axis %d", d);
        return FALSE;
      }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, r, dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  int64_t ih = r >= 2 ? x->dims[r - 2] : 1, iw = x->dims[r - 1];
  int64_t oh = r >= 2 ? dims[r - 2] : 1, ow = dims[r - 1];
  double sh = r >= 2 ? scales[r - 2] : 1.0, sw = scales[r - 1];
  int64_t planes = x->nelems / (ih * iw);
  /* tables: [hi (2 oh), wi (2 ow)] int64, then [hw (2 oh), ww (2 ow)] float, uploaded at once */
  gsize n_idx = 2 * (oh + ow), bytes = n_idx * sizeof (int64_t) + n_idx * sizeof (float);
  guint8 *host = g_malloc (bytes);
  int64_t *idx = (int64_t *) host;
  float *wts = (float *) (host + n_idx * sizeof (int64_t));
  axis_table (linear, coord, nearest, ih, oh, sh, idx, wts);
  axis_table (linear, coord, nearest, iw, ow, sw, idx + 2 * oh, wts + 2 * oh);
  int64_t n_bytes = (int64_t) bytes;
  GError *local = NULL;
  OwbTensor *tables = owb_device_new_tensor (ctx->device, OWB_TYPE_UINT8, 1, &n_bytes, &local);
  gboolean ok = tables && ctx->device->copy_from_host (ctx->device, tables->data, host, bytes, &local);
  g_free (host);
  if (!ok)
    {
      owb_kernel_set_error (ctx, error, local ? local->code : OWB_ERROR_DEVICE, "resize tables: %s",
                            local ? local->message : "failed");
      g_clear_error (&local);
      g_clear_pointer (&tables, owb_tensor_unref);
      return FALSE;
    }
  const int64_t *d_idx = tables->data;
  const float *d_w = (const float *) ((const guint8 *) tables->data + n_idx * sizeof (int64_t));
  ok = _owb_cuda_check (ctx, error,
                        _owb_cuda_resize2d (t, x->data, y->data, planes, ih, iw, oh, ow, d_idx, d_w, d_idx + 2 * oh,
                                            d_w + 2 * oh, cx->stream),
                        "Resize kernel");
  owb_tensor_unref (tables);
  return ok;
}

char *
_owb_cuda_resize_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  if (strcmp (node->op_type, "Resize") != 0 || (node->domain && node->domain[0]))
    return NULL;
  const char *mode = owb_node_get_string (node, "mode", "nearest");
  if (strcmp (mode, "nearest") != 0 && strcmp (mode, "linear") != 0)
    return g_strdup_printf ("the CUDA Resize has no mode %s", mode);
  const char *coord = owb_node_get_string (node, "coordinate_transformation_mode", "half_pixel");
  int coord_mode = find_name (coord_names, coord);
  if (coord_mode < 0 || coord_mode == OWB_RESIZE_COORD_TF_CROP_AND_RESIZE)
    return g_strdup_printf ("the CUDA Resize has no coordinate_transformation_mode %s", coord);
  int nearest_mode = find_name (nearest_names, owb_node_get_string (node, "nearest_mode", "round_prefer_floor"));
  /* (simple is the CPU's rule for Resize-10 and Upsample, not a name a model can write) */
  if (nearest_mode < 0)
    return g_strdup ("the CUDA Resize does not know this nearest_mode");
  if (owb_node_get_int (node, "antialias", 0) != 0 || owb_node_get_int (node, "exclude_outside", 0) != 0)
    return g_strdup ("the CUDA Resize has no antialias or exclude_outside");
  if (strcmp (owb_node_get_string (node, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
    return g_strdup ("the CUDA Resize stretches only (keep_aspect_ratio_policy)");
  return NULL;
}

const OwbKernelDef _owb_cuda_kernels_resize[] = {
  { "Resize", "", 11, 0, OWB_CUDA_TYPES_FLOAT, 0, NULL, NULL, compute_resize },
  { NULL }
};
