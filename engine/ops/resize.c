/* resize.c: schemas and shape inference of the resampling ops Resize and Upsample. The kernels are
 * providers/cpu/kernels/resize.c. */
#include "owb-ops-private.h"

#include <owb/owb-error.h>
#include <math.h>
#include <string.h>

static const OwbValueType *
input_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static gboolean
check_choice (OwbInferContext *ctx, const char *attr, const char *value, const char *const *allowed, GError **error)
{
  for (int i = 0; allowed[i]; i++)
    if (strcmp (value, allowed[i]) == 0)
      return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unsupported %s \"%s\"", attr, value);
  return FALSE;
}

/* The output length of a dim scaled by a factor, as the ONNX reference computes it. */
static gboolean
scaled_dim (OwbInferContext *ctx, OwbDim in, double scale, OwbDim *out, GError **error)
{
  if (scale == 1.0) {
    *out = in;
    return TRUE;
  }
  if (!owb_dim_is_known (in)) {
    *out = OWB_DIM_UNKNOWN;
    return TRUE;
  }
  double v = floor (scale * (double) in.value);
  if (!(v >= 0) || v > (double) (G_GINT64_CONSTANT (1) << 40)) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g makes an absurd output size", scale);
    return FALSE;
  }
  *out = OWB_DIM_VALUE ((int64_t) v);
  return TRUE;
}

/* The dims of in outside the resized axes are the output's too. */
static void
pass_other_dims (const OwbValueType *in, const int *axes, int n_axes, OwbValueType *out)
{
  gboolean resized[OWB_MAX_RANK] = { FALSE };
  for (int k = 0; k < n_axes; k++)
    resized[axes[k]] = TRUE;
  for (int d = 0; d < in->rank; d++)
    if (!resized[d])
      out->dims[d] = in->dims[d];
}

static gboolean
infer_resize (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  const char *op = ctx->node->op_type;
  gboolean upsample = strcmp (op, "Upsample") == 0;
  int scales_input = -1, sizes_input = -1, rank = in->rank;
  double scales[OWB_MAX_RANK];
  gboolean have_scales = FALSE, values_unknown = FALSE;
  int64_t sizes[OWB_MAX_RANK];
  int n_sizes = 0;
  int axes[OWB_MAX_RANK], n_axes;
  static const char *const modes_10[] = { "nearest", "linear", NULL };
  static const char *const modes_1[] = { "nearest", "bilinear", "linear", NULL };
  static const char *const modes[] = { "nearest", "linear", "cubic", NULL };
  static const char *const coords[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                        "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn", NULL };
  static const char *const nearest_modes[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };
  static const char *const policies[] = { "stretch", "not_larger", "not_smaller", NULL };
  const char *mode = owb_node_get_string (ctx->node, "mode", "nearest");
  const char *policy = "stretch";

  out->kind = OWB_VALUE_TENSOR;
  out->dtype = in->dtype;
  out->rank = rank;

  if (!check_choice (ctx, "mode", mode, upsample ? (ctx->opset < 7 ? modes_1 : modes_10) : (ctx->opset < 11 ? modes_10 : modes),
                     error))
    return FALSE;
  if (!upsample && ctx->opset >= 11) {
    const char *coord = owb_node_get_string (ctx->node, "coordinate_transformation_mode", "half_pixel");
    const char *nearest = owb_node_get_string (ctx->node, "nearest_mode", "round_prefer_floor");
    if (!check_choice (ctx, "coordinate_transformation_mode", coord, coords, error) ||
        !check_choice (ctx, "nearest_mode", nearest, nearest_modes, error))
      return FALSE;
    if (strcmp (coord, "half_pixel_symmetric") == 0 && ctx->opset < 19) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "half_pixel_symmetric needs opset 19");
      return FALSE;
    }
  }
  if (!upsample && ctx->opset >= 18) {
    policy = owb_node_get_string (ctx->node, "keep_aspect_ratio_policy", "stretch");
    if (!check_choice (ctx, "keep_aspect_ratio_policy", policy, policies, error))
      return FALSE;
  }
  if (in->dtype == OWB_TYPE_STRING && strcmp (mode, "nearest") != 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "mode %s does not accept string tensors", mode);
    return FALSE;
  }
  if (rank < 0)
    return TRUE;
  for (int d = 0; d < rank; d++)
    out->dims[d] = OWB_DIM_UNKNOWN;

  /* Which axes the scales/sizes refer to. */
  n_axes = rank;
  for (int d = 0; d < rank; d++)
    axes[d] = d;
  if (!upsample && ctx->opset >= 18) {
    int n = 0;
    const int64_t *a = owb_node_get_ints (ctx->node, "axes", &n);
    if (a != NULL) {
      gboolean mask[OWB_MAX_RANK];
      if (n > rank) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%d axes for rank %d", n, rank);
        return FALSE;
      }
      if (!_owb_infer_axes_to_mask (ctx, a, n, rank, mask, error))
        return FALSE;
      for (int k = 0; k < n; k++)
        axes[k] = (int) (a[k] < 0 ? a[k] + rank : a[k]);
      n_axes = n;
    }
  }

  if (upsample && ctx->opset < 7) {
    if (rank != 4) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Upsample-1 needs a 4-D input, not rank %d", rank);
      return FALSE;
    }
    scales[0] = scales[1] = 1.0;
    scales[2] = owb_node_get_float (ctx->node, "height_scale", 1.0f);
    scales[3] = owb_node_get_float (ctx->node, "width_scale", 1.0f);
    have_scales = TRUE;
  } else if (upsample && ctx->opset < 9) {
    int n = 0;
    const float *f = owb_node_get_floats (ctx->node, "scales", &n);
    if (f == NULL || n != rank) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'scales' must have %d values", rank);
      return FALSE;
    }
    for (int d = 0; d < rank; d++)
      scales[d] = f[d];
    have_scales = TRUE;
  } else {
    const OwbTensor *sv, *zv;
    if (upsample || ctx->opset < 11) {
      scales_input = 1;
    } else {
      scales_input = 2;
      sizes_input = 3;
    }
    if (input_type (ctx, scales_input) == NULL && (sizes_input < 0 || input_type (ctx, sizes_input) == NULL)) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of 'scales' and 'sizes' is required");
      return FALSE;
    }
    owb_infer_note_value_read (ctx, scales_input);
    if (sizes_input >= 0)
      owb_infer_note_value_read (ctx, sizes_input);
    sv = input_type (ctx, scales_input) && ctx->input_values ? ctx->input_values[scales_input] : NULL;
    zv = sizes_input >= 0 && input_type (ctx, sizes_input) && ctx->input_values ? ctx->input_values[sizes_input] : NULL;
    if (input_type (ctx, scales_input) && sv == NULL && !(input_type (ctx, scales_input)->rank == 1 &&
                                                          input_type (ctx, scales_input)->dims[0].value == 0))
      values_unknown = TRUE;
    if (sizes_input >= 0 && input_type (ctx, sizes_input) && zv == NULL)
      values_unknown = TRUE;
    if (sv != NULL && sv->nelems > 0) {
      if (sv->dtype != OWB_TYPE_FLOAT && sv->dtype != OWB_TYPE_DOUBLE && sv->dtype != OWB_TYPE_FLOAT16) {
        owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "'scales' must be float, not %s", owb_data_type_name (sv->dtype));
        return FALSE;
      }
      if (sv->nelems != n_axes) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'scales' has %" G_GINT64_FORMAT " values for %d axes", sv->nelems,
                             n_axes);
        return FALSE;
      }
      for (int d = 0; d < rank; d++)
        scales[d] = 1.0;
      for (int k = 0; k < n_axes; k++) {
        double s = owb_tensor_get_double (sv, k);
        if (!(s > 0) || !isfinite (s)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g must be positive", s);
          return FALSE;
        }
        scales[axes[k]] = s;
      }
      have_scales = TRUE;
    }
    if (zv != NULL && zv->nelems > 0) {
      gboolean known;
      if (have_scales) {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "only one of 'scales' and 'sizes' may be given");
        return FALSE;
      }
      if (!_owb_infer_read_input_ints (ctx, sizes_input, sizes, OWB_MAX_RANK, &n_sizes, &known, error))
        return FALSE;
      if (n_sizes != n_axes) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'sizes' has %d values for %d axes", n_sizes, n_axes);
        return FALSE;
      }
      for (int k = 0; k < n_sizes; k++)
        if (sizes[k] < 0 || sizes[k] > (G_GINT64_CONSTANT (1) << 40)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "size %" G_GINT64_FORMAT " is out of range", sizes[k]);
          return FALSE;
        }
    }
  }

  if (have_scales) {
    for (int d = 0; d < rank; d++)
      if (!scaled_dim (ctx, in->dims[d], scales[d], &out->dims[d], error))
        return FALSE;
    return TRUE;
  }
  if (n_sizes > 0) {
    pass_other_dims (in, axes, n_axes, out);
    if (strcmp (policy, "stretch") == 0) {
      for (int k = 0; k < n_axes; k++)
        out->dims[axes[k]] = OWB_DIM_VALUE (sizes[k]);
    } else {
      double scale = strcmp (policy, "not_larger") == 0 ? INFINITY : -INFINITY;
      for (int k = 0; k < n_axes; k++) {
        OwbDim d = in->dims[axes[k]];
        if (!owb_dim_is_known (d))
          return TRUE;
        double s = (double) sizes[k] / (double) d.value;
        scale = strcmp (policy, "not_larger") == 0 ? fmin (scale, s) : fmax (scale, s);
      }
      for (int k = 0; k < n_axes; k++) {
        double v = scale * (double) in->dims[axes[k]].value + 0.5;
        if (!(v >= 0) || v > (double) (G_GINT64_CONSTANT (1) << 40)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'sizes' make an absurd output size");
          return FALSE;
        }
        out->dims[axes[k]] = OWB_DIM_VALUE ((int64_t) v);
      }
    }
    return TRUE;
  }
  if (!values_unknown) {
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of 'scales' and 'sizes' must be non-empty");
    return FALSE;
  }
  /* Scales or sizes only known at run time: dims outside `axes` pass through. */
  if (n_axes < rank)
    pass_other_dims (in, axes, n_axes, out);
  return TRUE;
}

const OwbOpSchema _owb_ops_resize[] = {
  { "Resize", "", 10, 2, 2, 1, 1, infer_resize },
  { "Resize", "", 11, 1, 4, 1, 1, infer_resize },
  { "Upsample", "", 1, 1, 1, 1, 1, infer_resize },
  { "Upsample", "", 9, 2, 2, 1, 1, infer_resize },
  { NULL }
};
