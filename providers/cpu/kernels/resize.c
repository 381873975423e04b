/* resize.c: CPU kernels of the resampling ops Resize and Upsample. */
#include "../cpu-kernels-private.h"
#include "numeric-private.h"
#include "../../owb-resize-coordinate-private.h"

#include <math.h>
#include <string.h>

/* Work below this many elements is not worth handing to another thread. */
#define PARALLEL_GRAIN 32768

static int64_t
grain_for (int64_t work_per_unit)
{
  return MAX (1, PARALLEL_GRAIN / MAX (1, work_per_unit));
}

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } ResizeMode;
typedef OwbResizeCoord CoordMode;
typedef OwbResizeNearest NearestMode;
typedef enum { POLICY_STRETCH, POLICY_NOT_LARGER, POLICY_NOT_SMALLER } AspectPolicy;

typedef struct {
  ResizeMode mode;
  CoordMode coord;
  NearestMode nearest;
  AspectPolicy policy;
  double cubic_a;
  double extrapolation;
  gboolean exclude_outside;
  gboolean antialias;
  gboolean has_axes;
  int n_axes;
  int64_t axes[OWB_MAX_RANK];
  int roi_input, scales_input, sizes_input; /* -1: not an input at this opset */
  int n_attr_scales;                        /* Upsample before opset 9: scales are attributes */
  double attr_scales[OWB_MAX_RANK];
} ResizeParams;

static gboolean
pick (const OwbNode *node, const char *attr, const char *def, const char *const *names, int *out, GError **error)
{
  const char *v = owb_node_get_string (node, attr, def);
  for (int i = 0; names[i]; i++)
    if (strcmp (v, names[i]) == 0) {
      *out = i;
      return TRUE;
    }
  _owb_cpu_node_error (node, error, OWB_ERROR_UNSUPPORTED_OP, "unsupported %s \"%s\"", attr, v);
  return FALSE;
}

static gboolean
resize_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  static const char *const modes[] = { "nearest", "linear", "cubic", NULL };
  static const char *const modes_1[] = { "nearest", "bilinear", "linear", NULL };
  static const char *const coords[] = OWB_RESIZE_COORD_NAMES;
  static const char *const nearests[] = OWB_RESIZE_NEAREST_NAMES;
  static const char *const policies[] = { "stretch", "not_larger", "not_smaller", NULL };
  gboolean upsample = strcmp (node->op_type, "Upsample") == 0;
  ResizeParams *p = g_new0 (ResizeParams, 1);
  int v;

  p->roi_input = p->scales_input = p->sizes_input = -1;
  /* Before Resize-11 (and in Upsample) sampling is asymmetric. */
  p->coord = OWB_RESIZE_COORD_ASYMMETRIC;
  p->nearest = OWB_RESIZE_NEAREST_SIMPLE;
  p->cubic_a = -0.75;
  if (upsample && opset < 7) {
    if (!pick (node, "mode", "nearest", modes_1, &v, error))
      goto fail;
    p->mode = v == 0 ? MODE_NEAREST : MODE_LINEAR;
    p->n_attr_scales = 4;
    p->attr_scales[0] = p->attr_scales[1] = 1.0;
    p->attr_scales[2] = owb_node_get_float (node, "height_scale", 1.0f);
    p->attr_scales[3] = owb_node_get_float (node, "width_scale", 1.0f);
  } else {
    if (!pick (node, "mode", "nearest", modes, &v, error))
      goto fail;
    p->mode = v;
    if ((upsample || opset < 11) && p->mode == MODE_CUBIC) {
      _owb_cpu_node_error (node, error, OWB_ERROR_UNSUPPORTED_OP, "mode cubic needs Resize-11");
      goto fail;
    }
  }
  if (upsample && opset >= 7 && opset < 9) {
    int n = 0;
    const float *f = owb_node_get_floats (node, "scales", &n);
    if (f == NULL || n > OWB_MAX_RANK) {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute 'scales' is missing or too long");
      goto fail;
    }
    p->n_attr_scales = n;
    for (int i = 0; i < n; i++)
      p->attr_scales[i] = f[i];
  } else if (upsample && opset >= 9) {
    p->scales_input = 1;
  } else if (!upsample && opset < 11) {
    p->scales_input = 1;
  } else if (!upsample) {
    p->roi_input = 1;
    p->scales_input = 2;
    p->sizes_input = 3;
    if (!pick (node, "coordinate_transformation_mode", "half_pixel", coords, &v, error))
      goto fail;
    p->coord = v;
    if (!pick (node, "nearest_mode", "round_prefer_floor", nearests, &v, error))
      goto fail;
    p->nearest = v;
    p->cubic_a = owb_node_get_float (node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = owb_node_get_int (node, "exclude_outside", 0) != 0;
    p->extrapolation = owb_node_get_float (node, "extrapolation_value", 0.0f);
    if (opset >= 18) {
      int n = 0;
      const int64_t *a = owb_node_get_ints (node, "axes", &n);
      p->antialias = owb_node_get_int (node, "antialias", 0) != 0;
      if (!pick (node, "keep_aspect_ratio_policy", "stretch", policies, &v, error))
        goto fail;
      p->policy = v;
      if (a != NULL) {
        if (n > OWB_MAX_RANK) {
          _owb_cpu_node_error (node, error, OWB_ERROR_SHAPE, "too many axes");
          goto fail;
        }
        p->has_axes = TRUE;
        p->n_axes = n;
        memcpy (p->axes, a, n * sizeof (int64_t));
      }
    }
  }
  *state = p;
  return TRUE;
fail:
  g_free (p);
  return FALSE;
}

static gboolean
is_close (double a, double b)
{
  return fabs (a - b) <= MAX (1e-9 * MAX (fabs (a), fabs (b)), 0.0) || a == b;
}

static double
cubic_weight (double d, double a)
{
  d = fabs (d);
  if (d <= 1)
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2)
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

/* One axis of the resampling: for each output index, which input indices contribute with which
 * weights (or, for nearest, the one index), and whether it lies outside a crop (extrapolated). */
typedef struct {
  int64_t in, out;
  gboolean identity;
  int n_taps;
  int64_t *index;  /* out * n_taps */
  double *weight;  /* out * n_taps (not for nearest) */
  guint8 *outside; /* out, or NULL */
} ResizeAxis;

static gboolean
resize_axis_init (const ResizeParams *p, ResizeAxis *ax, int64_t in, int64_t out, double scale, double roi_start,
                  double roi_end, gboolean roi_float)
{
  gboolean crop = p->coord == OWB_RESIZE_COORD_TF_CROP_AND_RESIZE;
  double s = 1;
  int start = 0;

  memset (ax, 0, sizeof (*ax));
  ax->in = in;
  ax->out = out;
  ax->identity = is_close (scale, 1.0) && out == in && (!crop || (is_close (roi_start, 0) && is_close (roi_end, 1)));
  if (p->mode == MODE_NEAREST) {
    ax->n_taps = 1;
  } else {
    /* Antialiasing stretches the filter by 1/scale when shrinking. */
    if (p->antialias && scale < 1)
      s = scale;
    start = (int) floor ((p->mode == MODE_LINEAR ? -1.0 : -2.0) / s) + 1;
    if (-(double) start > 1e7)
      return FALSE;
    ax->n_taps = 2 - 2 * start;
  }
  if ((double) out * ax->n_taps > (double) G_MAXINT32 * 4)
    return FALSE;
  ax->index = g_try_new (int64_t, MAX (1, out * ax->n_taps));
  ax->weight = p->mode == MODE_NEAREST ? NULL : g_try_new (double, MAX (1, out * ax->n_taps));
  ax->outside = crop ? g_try_new0 (guint8, MAX (1, out)) : NULL;
  if (ax->index == NULL || (p->mode != MODE_NEAREST && ax->weight == NULL) || (crop && ax->outside == NULL))
    return FALSE;

  for (int64_t y = 0; y < out; y++) {
    int64_t *idx = ax->index + y * ax->n_taps;
    double *w = ax->weight ? ax->weight + y * ax->n_taps : NULL;
    double x, base, ratio;

    if (ax->identity) {
      x = (double) y;
    } else {
      x = _owb_resize_coordinate (p->coord, (double) y, scale, in, out, roi_start, roi_end, roi_float);
      if (crop && (x < 0 || x > (double) (in - 1))) {
        ax->outside[y] = 1;
        for (int t = 0; t < ax->n_taps; t++) {
          idx[t] = 0;
          if (w)
            w[t] = 0;
        }
        continue;
      }
    }
    x = _owb_resize_bound (x);
    if (p->mode == MODE_NEAREST) {
      idx[0] = _owb_resize_nearest_index (p->nearest, x, scale, in);
      continue;
    }
    base = floor (x);
    ratio = x - base;
    double sum = 0;
    for (int t = 0; t < ax->n_taps; t++) {
      double i = base + start + t;
      double d = (start + t - ratio) * s;
      double wt = p->mode == MODE_LINEAR ? MAX (0.0, 1 - fabs (d)) : cubic_weight (d, p->cubic_a);
      if (p->exclude_outside && (i < 0 || i >= (double) in))
        wt = 0;
      w[t] = wt;
      sum += wt;
      idx[t] = _owb_resize_clamp_index (i, in);
    }
    if ((p->antialias || p->exclude_outside) && sum != 0)
      for (int t = 0; t < ax->n_taps; t++)
        w[t] /= sum;
  }
  return TRUE;
}

static void
resize_axis_clear (ResizeAxis *ax)
{
  g_free (ax->index);
  g_free (ax->weight);
  g_free (ax->outside);
}

/* Nearest: a gather of whole elements, whatever their type. */
typedef struct {
  const ResizeParams *params;
  int rank;
  const ResizeAxis *axes;
  const int64_t *in_strides;
  const int64_t *out_dims;
  const void *x;
  void *y;
  gsize es;
  const void *fill; /* the extrapolation value as one element */
} NearestJob;

#define NEAREST_ROW(T)                                                                                \
  do {                                                                                                \
    const T *src = (const T *) job->x + base;                                                         \
    T *dst = (T *) job->y + row * len;                                                                \
    T fill = *(const T *) job->fill;                                                                  \
    if (outside) {                                                                                    \
      for (int64_t j = 0; j < len; j++)                                                               \
        dst[j] = fill;                                                                                \
    } else if (last->outside) {                                                                       \
      for (int64_t j = 0; j < len; j++)                                                               \
        dst[j] = last->outside[j] ? fill : src[last->index[j] * stride];                              \
    } else {                                                                                          \
      for (int64_t j = 0; j < len; j++)                                                               \
        dst[j] = src[last->index[j] * stride];                                                        \
    }                                                                                                 \
  } while (0)

static void
nearest_rows (int64_t begin, int64_t end, gpointer data)
{
  const NearestJob *job = data;
  const int r = job->rank;
  const ResizeAxis *last = &job->axes[r - 1];
  const int64_t len = job->out_dims[r - 1], stride = job->in_strides[r - 1];

  for (int64_t row = begin; row < end; row++) {
    int64_t rem = row, base = 0;
    gboolean outside = FALSE;
    for (int d = r - 2; d >= 0; d--) {
      int64_t i = rem % job->out_dims[d];
      rem /= job->out_dims[d];
      base += job->axes[d].index[i] * job->in_strides[d];
      if (job->axes[d].outside && job->axes[d].outside[i])
        outside = TRUE;
    }
    switch (job->es) {
    case 1:
      NEAREST_ROW (uint8_t);
      break;
    case 2:
      NEAREST_ROW (uint16_t);
      break;
    case 4:
      NEAREST_ROW (uint32_t);
      break;
    default:
      NEAREST_ROW (uint64_t);
      break;
    }
  }
}

/* Linear and cubic: one axis at a time ([outer, in, inner] -> [outer, out, inner]); the filter
 * is separable, so this equals the n-D interpolation. */
typedef struct {
  const ResizeAxis *ax;
  const void *src;
  void *dst;
  int64_t inner;
  double fill;
} PassJob;

#define DEFINE_PASS(W)                                                                                \
  static void pass_units_##W (int64_t begin, int64_t end, gpointer data)                              \
  {                                                                                                   \
    const PassJob *job = data;                                                                        \
    const ResizeAxis *ax = job->ax;                                                                   \
    const int64_t in = ax->in, out = ax->out, inner = job->inner;                                     \
    const int n = ax->n_taps;                                                                         \
    int64_t y = begin % out;                                                                          \
    const W *s = (const W *) job->src + (begin / out) * in * inner;                                   \
    for (int64_t u = begin; u < end; u++) {                                                           \
      W *d = (W *) job->dst + u * inner;                                                              \
      const int64_t *idx = ax->index + y * n;                                                         \
      const double *w = ax->weight + y * n;                                                           \
      if (ax->outside && ax->outside[y]) {                                                            \
        for (int64_t j = 0; j < inner; j++)                                                           \
          d[j] = (W) job->fill;                                                                       \
      } else if (inner == 1) {                                                                        \
        if (n == 2) {                                                                                 \
          d[0] = (W) w[0] * s[idx[0]] + (W) w[1] * s[idx[1]];                                         \
        } else if (n == 4) {                                                                          \
          d[0] = ((W) w[0] * s[idx[0]] + (W) w[1] * s[idx[1]]) + ((W) w[2] * s[idx[2]] + (W) w[3] * s[idx[3]]); \
        } else {                                                                                      \
          W acc = 0;                                                                                  \
          for (int t = 0; t < n; t++)                                                                 \
            acc += (W) w[t] * s[idx[t]];                                                              \
          d[0] = acc;                                                                                 \
        }                                                                                             \
      } else {                                                                                        \
        const W w0 = (W) w[0];                                                                        \
        const W *restrict s0 = s + idx[0] * inner;                                                    \
        W *restrict dr = d;                                                                           \
        for (int64_t j = 0; j < inner; j++)                                                           \
          dr[j] = w0 * s0[j];                                                                         \
        for (int t = 1; t < n; t++) {                                                                 \
          const W wt = (W) w[t];                                                                      \
          const W *restrict st = s + idx[t] * inner;                                                  \
          if (wt == 0)                                                                                \
            continue;                                                                                 \
          for (int64_t j = 0; j < inner; j++)                                                         \
            dr[j] += wt * st[j];                                                                      \
        }                                                                                             \
      }                                                                                               \
      if (++y == out) {                                                                               \
        y = 0;                                                                                        \
        s += in * inner;                                                                              \
      }                                                                                               \
    }                                                                                                 \
  }
DEFINE_PASS (float)
DEFINE_PASS (double)

static void
store_double (OwbDataType dtype, void *dst, double v)
{
  switch (dtype) {
#define CASE(T, N)                           \
  case OWB_TYPE_##N:                         \
    *(T *) dst = from_double_##N (v);        \
    break;
    OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
  case OWB_TYPE_BOOL:
    *(uint8_t *) dst = v != 0;
    break;
  default:
    break;
  }
}

static gboolean
resize_compute (OwbKernelContext *ctx, GError **error)
{
  const ResizeParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  const int r = x->rank;
  double scales[OWB_MAX_RANK], roi_start[OWB_MAX_RANK], roi_end[OWB_MAX_RANK];
  int axes[OWB_MAX_RANK], n_axes = r;
  ResizeAxis rax[OWB_MAX_RANK];
  int n_init = 0;
  int64_t in_strides[OWB_MAX_RANK];
  gboolean ok = FALSE, roi_float = FALSE;
  gsize es = owb_data_type_size (x->dtype);

  if (y->rank != r) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output rank %d differs from the input's %d", y->rank, r);
    return FALSE;
  }
  if (y->nelems == 0)
    return TRUE;
  if (x->nelems == 0) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot resize an empty tensor to a non-empty one");
    return FALSE;
  }
  if (r == 0) {
    memcpy (y->data, x->data, es);
    return TRUE;
  }

  for (int d = 0; d < r; d++) {
    axes[d] = d;
    scales[d] = 1.0;
    roi_start[d] = 0.0;
    roi_end[d] = 1.0;
  }
  if (p->has_axes) {
    gboolean seen[OWB_MAX_RANK] = { FALSE };
    n_axes = p->n_axes;
    for (int k = 0; k < n_axes; k++) {
      int64_t a = p->axes[k] < 0 ? p->axes[k] + r : p->axes[k];
      if (a < 0 || a >= r || seen[a]) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is out of range or repeated", p->axes[k]);
        return FALSE;
      }
      seen[a] = TRUE;
      axes[k] = (int) a;
    }
  }

  if (p->n_attr_scales > 0) {
    if (p->n_attr_scales != r) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%d scales for rank %d", p->n_attr_scales, r);
      return FALSE;
    }
    for (int d = 0; d < r; d++)
      scales[d] = p->attr_scales[d];
  } else {
    const OwbTensor *sc = p->scales_input >= 0 && p->scales_input < ctx->n_inputs ? ctx->inputs[p->scales_input] : NULL;
    const OwbTensor *sz = p->sizes_input >= 0 && p->sizes_input < ctx->n_inputs ? ctx->inputs[p->sizes_input] : NULL;
    if (sc != NULL && sc->nelems == 0)
      sc = NULL;
    if (sz != NULL && sz->nelems == 0)
      sz = NULL;
    if (sc != NULL) {
      if (sc->nelems != n_axes) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "'scales' has %" G_GINT64_FORMAT " values for %d axes", sc->nelems,
                              n_axes);
        return FALSE;
      }
      for (int k = 0; k < n_axes; k++)
        scales[axes[k]] = owb_tensor_get_double (sc, k);
    } else if (sz != NULL) {
      if (sz->nelems != n_axes) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "'sizes' has %" G_GINT64_FORMAT " values for %d axes", sz->nelems,
                              n_axes);
        return FALSE;
      }
      if (p->policy == POLICY_STRETCH) {
        for (int k = 0; k < n_axes; k++)
          scales[axes[k]] = (double) owb_tensor_get_int64 (sz, k) / (double) x->dims[axes[k]];
      } else {
        double s = p->policy == POLICY_NOT_LARGER ? INFINITY : -INFINITY;
        for (int k = 0; k < n_axes; k++) {
          double v = (double) owb_tensor_get_int64 (sz, k) / (double) x->dims[axes[k]];
          s = p->policy == POLICY_NOT_LARGER ? fmin (s, v) : fmax (s, v);
        }
        for (int k = 0; k < n_axes; k++)
          scales[axes[k]] = s;
      }
    } else {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of 'scales' and 'sizes' must be given");
      return FALSE;
    }
  }
  for (int d = 0; d < r; d++)
    if (!(scales[d] > 0) || !isfinite (scales[d])) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g for axis %d is not positive", scales[d], d);
      return FALSE;
    }
  if (p->coord == OWB_RESIZE_COORD_TF_CROP_AND_RESIZE && p->roi_input >= 0 && p->roi_input < ctx->n_inputs &&
      ctx->inputs[p->roi_input] != NULL && ctx->inputs[p->roi_input]->nelems > 0) {
    const OwbTensor *roi = ctx->inputs[p->roi_input];
    if (roi->nelems != 2 * n_axes) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "'roi' has %" G_GINT64_FORMAT " values for %d axes", roi->nelems, n_axes);
      return FALSE;
    }
    roi_float = roi->dtype != OWB_TYPE_DOUBLE;
    for (int k = 0; k < n_axes; k++) {
      roi_start[axes[k]] = owb_tensor_get_double (roi, k);
      roi_end[axes[k]] = owb_tensor_get_double (roi, n_axes + k);
    }
  }

  in_strides[r - 1] = 1;
  for (int d = r - 2; d >= 0; d--)
    in_strides[d] = in_strides[d + 1] * x->dims[d + 1];
  for (int d = 0; d < r; d++, n_init++)
    if (!resize_axis_init (p, &rax[d], x->dims[d], y->dims[d], scales[d], roi_start[d], roi_end[d], roi_float)) {
      resize_axis_clear (&rax[d]);
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "resampling axis %d needs too much memory", d);
      goto out;
    }

  /* Channels-last [N, H, W, C] with only H and W resized: a run of C contiguous values per sample
   * (layout-deconv.c), in the pass order used below. */
  if (r == 4 && rax[0].identity && rax[3].identity && !(rax[1].identity && rax[2].identity)) {
    OwbCpuResizeAxis ah = { rax[1].n_taps, rax[1].identity ? NULL : rax[1].index, rax[1].weight, rax[1].outside };
    OwbCpuResizeAxis aw = { rax[2].n_taps, rax[2].identity ? NULL : rax[2].index, rax[2].weight, rax[2].outside };
    double rh = (double) rax[1].out / (double) rax[1].in, rw = (double) rax[2].out / (double) rax[2].in;
    char fill[8] = { 0 };
    store_double (x->dtype, fill, p->extrapolation);
    if (_owb_cpu_resize_channels_last (ctx->pool, x, y, p->mode == MODE_NEAREST || x->dtype == OWB_TYPE_BOOL, &ah, &aw,
                                       rh < rw || (rh == rw && rw < 1), fill, p->extrapolation)) {
      ok = TRUE;
      goto out;
    }
  }

  if (p->mode == MODE_NEAREST || x->dtype == OWB_TYPE_BOOL) {
    char fill[8] = { 0 };
    NearestJob job = { p, r, rax, in_strides, y->dims, x->data, y->data, es, fill };
    int64_t rows = y->nelems / y->dims[r - 1];
    if (es != 1 && es != 2 && es != 4 && es != 8) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "type %s is not supported", owb_data_type_name (x->dtype));
      goto out;
    }
    store_double (x->dtype, fill, p->extrapolation);
    owb_parallel_for (ctx->pool, rows, grain_for (y->dims[r - 1]), nearest_rows, &job);
    ok = TRUE;
    goto out;
  }

  {
    gboolean is_float = x->dtype == OWB_TYPE_FLOAT;
    gsize ws = is_float ? sizeof (float) : sizeof (double);
    int64_t dims[OWB_MAX_RANK];
    int n_passes = 0, done = 0;
    const void *src;
    void *owned_src = NULL;

    for (int d = 0; d < r; d++) {
      dims[d] = x->dims[d];
      if (!rax[d].identity)
        n_passes++;
    }
    if (n_passes == 0) {
      memcpy (y->data, x->data, x->nbytes);
      ok = TRUE;
      goto out;
    }
    if (is_float || x->dtype == OWB_TYPE_DOUBLE) {
      src = x->data;
    } else {
      double *conv = g_try_new (double, x->nelems);
      if (conv == NULL) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
        goto out;
      }
      for (int64_t i = 0; i < x->nelems; i++)
        conv[i] = owb_tensor_get_double (x, i);
      src = owned_src = conv;
    }
    /* Shrinking axes first, then growing ones, so that the data stays small. The innermost
     * axis's pass is a gather per element rather than a vector loop over rows: at equal ratios
     * it goes where its output is smallest (last when shrinking, first when growing). */
    int order[OWB_MAX_RANK], n_order = 0;
    for (int d = 0; d < r; d++)
      if (!rax[d].identity) {
        int at = n_order++;
        double ratio = (double) rax[d].out / (double) rax[d].in;
        while (at > 0) {
          double prev = (double) rax[order[at - 1]].out / (double) rax[order[at - 1]].in;
          if (prev < ratio || (prev == ratio && ratio < 1))
            break;
          order[at] = order[at - 1];
          at--;
        }
        order[at] = d;
      }
    for (int k = 0; k < n_order; k++) {
      int d = order[k];
      int64_t outer = 1, inner = 1, count;
      void *dst;
      PassJob job;
      for (int q = 0; q < d; q++)
        outer *= dims[q];
      for (int q = d + 1; q < r; q++)
        inner *= dims[q];
      dims[d] = rax[d].out;
      count = outer * rax[d].out * inner;
      done++;
      if (done == n_passes && (is_float || x->dtype == OWB_TYPE_DOUBLE)) {
        dst = y->data;
      } else if ((dst = g_try_malloc (MAX (1, count) * ws)) == NULL) {
        g_free (owned_src);
        owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
        goto out;
      }
      job = (PassJob) { &rax[d], src, dst, inner, p->extrapolation };
      owb_parallel_for (ctx->pool, outer * rax[d].out, grain_for (inner * rax[d].n_taps),
                        is_float ? pass_units_float : pass_units_double, &job);
      g_free (owned_src);
      src = owned_src = dst == y->data ? NULL : dst;
    }
    if (owned_src != NULL) {
      /* Integers: the double result rounded and saturated into the element type. */
      const double *v = owned_src;
      for (int64_t i = 0; i < y->nelems; i++)
        store_double (y->dtype, (char *) y->data + i * es, v[i]);
      g_free (owned_src);
    }
    ok = TRUE;
  }
out:
  for (int d = 0; d < n_init; d++)
    resize_axis_clear (&rax[d]);
  return ok;
}

const OwbKernelDef _owb_cpu_kernels_resize[] = {
  { "Resize", "", 10, 0, OWB_CPU_TYPES_ALL, 0, resize_prepare, g_free, resize_compute },
  { "Upsample", "", 1, 0, OWB_CPU_TYPES_ALL, 0, resize_prepare, g_free, resize_compute },
  { NULL }
};
