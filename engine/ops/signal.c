/* signal.c: schemas and shape inference of the signal and image op family: DFT, STFT, the window
 * generators, MelWeightMatrix, GridSample, AffineGrid, RoiAlign, NonMaxSuppression and DeformConv.
 * ImageDecoder is in image-decoder.c. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* Sizes and attribute values beyond this are refused: no real model needs them, and the bound
 * keeps the size arithmetic far from int64 overflow. */
#define MAX_SIZE (G_GINT64_CONSTANT (1) << 31)


static const OwbValueType *
input_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static void
init_output (OwbInferContext *ctx, OwbDataType dtype, int rank)
{
  OwbValueType *y = &ctx->outputs[0];
  owb_value_type_init_unknown (y);
  y->kind = OWB_VALUE_TENSOR;
  y->dtype = dtype;
  y->rank = rank;
  for (int i = 0; i < MAX (rank, 0); i++)
    y->dims[i] = OWB_DIM_UNKNOWN;
}

static gboolean
check_rank (OwbInferContext *ctx, int input, const char *name, int lo, int hi, GError **error)
{
  const OwbValueType *t = input_type (ctx, input);
  if (!t || t->rank < 0)
    return TRUE;
  if (t->rank < lo || t->rank > hi)
    {
      if (lo == hi)
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must have rank %d, got rank %d", name, lo,
                             t->rank);
      else
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must have rank %d to %d, got rank %d", name, lo,
                             hi, t->rank);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_dim (OwbInferContext *ctx, int input, const char *name, int axis, int64_t want, GError **error)
{
  OwbDim d = _owb_infer_dim (input_type (ctx, input), axis);
  if (owb_dim_is_known (d) && d.value != want)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input %s must have %" G_GINT64_FORMAT " entries on axis %d, got %" G_GINT64_FORMAT, name,
                           want, axis, d.value);
      return FALSE;
    }
  return TRUE;
}

/* Reads a scalar integer input (rank 0 or one element). *known is FALSE when the value is not
 * available (not a constant at load time); a present value with more than one element is an error. */
static gboolean
get_scalar_int (OwbInferContext *ctx, int input, const char *name, int64_t *value, gboolean *known, GError **error)
{
  *known = FALSE;
  const OwbValueType *t = input_type (ctx, input);
  if (!t)
    return TRUE;
  if (t->dtype != OWB_TYPE_UNDEFINED && t->dtype != OWB_TYPE_INT32 && t->dtype != OWB_TYPE_INT64)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %s must be int32 or int64, got %s", name,
                           owb_data_type_name (t->dtype));
      return FALSE;
    }
  if (t->rank > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must be a scalar, got rank %d", name, t->rank);
      return FALSE;
    }
  int64_t *v = NULL, n = 0;
  if (!owb_infer_get_ints (ctx, input, &v, &n))
    return TRUE;
  if (n != 1)
    {
      g_free (v);
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must hold one value, got %" G_GINT64_FORMAT, name, n);
      return FALSE;
    }
  *value = v[0];
  *known = TRUE;
  g_free (v);
  return TRUE;
}

static gboolean
is_float_type (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16 || t == OWB_TYPE_BFLOAT16
         || t == OWB_TYPE_UNDEFINED;
}

static gboolean
check_float_input (OwbInferContext *ctx, int input, const char *name, GError **error)
{
  const OwbValueType *t = input_type (ctx, input);
  if (t && !is_float_type (t->dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %s must be a floating-point tensor, got %s", name,
                           owb_data_type_name (t->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_same_dtype (OwbInferContext *ctx, int i, const char *in, int j, const char *jn, GError **error)
{
  const OwbValueType *a = input_type (ctx, i), *b = input_type (ctx, j);
  if (a && b && a->dtype != b->dtype && a->dtype != OWB_TYPE_UNDEFINED && b->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %s is %s but input %s is %s", in,
                           owb_data_type_name (a->dtype), jn, owb_data_type_name (b->dtype));
      return FALSE;
    }
  return TRUE;
}

/* ---- DFT ---- */

static gboolean
infer_dft (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  int64_t inverse, onesided;
  if (!_owb_infer_get_flag (ctx, "inverse", 0, &inverse, error) || !_owb_infer_get_flag (ctx, "onesided", 0, &onesided, error)
      || !check_float_input (ctx, 0, "input", error))
    return FALSE;
  gboolean irfft = inverse && onesided;
  init_output (ctx, x->dtype, x->rank);
  if (x->rank < 0)
    return TRUE;
  int r = x->rank;
  if (r < 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input must have rank >= 2 (signal axes, then 1 or 2 for real/complex), got rank %d", r);
      return FALSE;
    }
  OwbDim last = x->dims[r - 1];
  if (owb_dim_is_known (last) && last.value != 1 && last.value != 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "the last axis of the input must be 1 (real) or 2 (complex), got %" G_GINT64_FORMAT,
                           last.value);
      return FALSE;
    }

  /* Axis: an attribute (default 1) before opset 20, an optional input (default -2) since. */
  int64_t axis = 1;
  gboolean axis_known = TRUE;
  if (ctx->opset >= 20)
    {
      axis = -2;
      if (input_type (ctx, 2) && !get_scalar_int (ctx, 2, "axis", &axis, &axis_known, error))
        return FALSE;
    }
  else
    axis = owb_node_get_int (ctx->node, "axis", 1);
  if (axis_known)
    {
      if (axis < -r || axis > r - 2)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "axis %" G_GINT64_FORMAT " is out of range for rank %d (the last axis holds the "
                               "real/imaginary parts)",
                               axis, r);
          return FALSE;
        }
      if (axis < 0)
        axis += r;
      if (axis == r - 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "axis %d is the real/imaginary axis, not a signal axis", (int) axis);
          return FALSE;
        }
    }

  int64_t n = 0;
  gboolean n_given = input_type (ctx, 1) != NULL, n_known = FALSE;
  if (n_given && !get_scalar_int (ctx, 1, "dft_length", &n, &n_known, error))
    return FALSE;
  if (n_known && (n < 1 || n > MAX_SIZE))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "dft_length = %" G_GINT64_FORMAT " must be in 1..2^31",
                           n);
      return FALSE;
    }

  OwbValueType *y = &ctx->outputs[0];
  y->dims[r - 1] = OWB_DIM_VALUE (irfft ? 1 : 2);
  if (!axis_known)
    return TRUE;
  for (int i = 0; i < r - 1; i++)
    y->dims[i] = x->dims[i];
  OwbDim in = x->dims[axis];
  OwbDim out = OWB_DIM_UNKNOWN;
  if (!n_given)
    {
      if (owb_dim_is_known (in))
        {
          n = irfft ? 2 * (in.value - 1) : in.value;
          if (n < 1)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "the signal axis %d has %" G_GINT64_FORMAT " entries: too short for this transform",
                                   (int) axis, in.value);
              return FALSE;
            }
          n_known = TRUE;
        }
      else if (!onesided)
        out = in;
    }
  if (n_known)
    out = OWB_DIM_VALUE (onesided && !inverse ? n / 2 + 1 : n);
  y->dims[axis] = out;
  return TRUE;
}

/* ---- STFT ---- */

static gboolean
infer_stft (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  const OwbValueType *window = input_type (ctx, 2);
  int64_t onesided;
  if (!_owb_infer_get_flag (ctx, "onesided", 1, &onesided, error) || !check_float_input (ctx, 0, "signal", error)
      || !check_same_dtype (ctx, 0, "signal", 2, "window", error) || !check_rank (ctx, 0, "signal", 3, 3, error)
      || !check_rank (ctx, 2, "window", 1, 1, error))
    return FALSE;
  init_output (ctx, x->dtype, 4);
  OwbValueType *y = &ctx->outputs[0];
  y->dims[3] = OWB_DIM_VALUE (2);
  y->dims[0] = _owb_infer_dim (x, 0);
  OwbDim last = _owb_infer_dim (x, 2);
  if (owb_dim_is_known (last) && last.value != 1 && last.value != 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "the last axis of the signal must be 1 (real) or 2 (complex), got %" G_GINT64_FORMAT,
                           last.value);
      return FALSE;
    }
  int64_t step = 0, fl = 0;
  gboolean step_known, fl_known = FALSE;
  if (!get_scalar_int (ctx, 1, "frame_step", &step, &step_known, error))
    return FALSE;
  if (step_known && (step < 1 || step > MAX_SIZE))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "frame_step = %" G_GINT64_FORMAT " must be >= 1", step);
      return FALSE;
    }
  OwbDim wlen = _owb_infer_dim (window, 0);
  if (input_type (ctx, 3))
    {
      if (!get_scalar_int (ctx, 3, "frame_length", &fl, &fl_known, error))
        return FALSE;
      if (fl_known && (fl < 1 || fl > MAX_SIZE))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "frame_length = %" G_GINT64_FORMAT " must be >= 1",
                               fl);
          return FALSE;
        }
      if (fl_known && owb_dim_is_known (wlen) && wlen.value != fl)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "the window has %" G_GINT64_FORMAT " values but frame_length is %" G_GINT64_FORMAT,
                               wlen.value, fl);
          return FALSE;
        }
    }
  else if (window)
    {
      fl_known = owb_dim_is_known (wlen);
      fl = wlen.value;
    }
  else
    {
      OwbDim len = _owb_infer_dim (x, 1);
      fl_known = owb_dim_is_known (len);
      fl = len.value;
    }
  if (fl_known && fl < 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the frame length must be >= 1");
      return FALSE;
    }
  if (fl_known)
    y->dims[2] = OWB_DIM_VALUE (onesided ? fl / 2 + 1 : fl);
  OwbDim len = _owb_infer_dim (x, 1);
  if (fl_known && owb_dim_is_known (len) && len.value < fl)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "the signal (%" G_GINT64_FORMAT " samples) is shorter than one frame (%" G_GINT64_FORMAT ")",
                           len.value, fl);
      return FALSE;
    }
  if (fl_known && step_known && owb_dim_is_known (len))
    y->dims[1] = OWB_DIM_VALUE ((len.value - fl) / step + 1);
  return TRUE;
}

/* ---- window generators and MelWeightMatrix ---- */

static gboolean
get_output_datatype (OwbInferContext *ctx, OwbDataType *out, GError **error)
{
  int64_t t = owb_node_get_int (ctx->node, "output_datatype", OWB_TYPE_FLOAT);
  switch (t)
    {
    case OWB_TYPE_UINT8:
    case OWB_TYPE_UINT16:
    case OWB_TYPE_UINT32:
    case OWB_TYPE_UINT64:
    case OWB_TYPE_INT8:
    case OWB_TYPE_INT16:
    case OWB_TYPE_INT32:
    case OWB_TYPE_INT64:
    case OWB_TYPE_FLOAT16:
    case OWB_TYPE_FLOAT:
    case OWB_TYPE_DOUBLE:
    case OWB_TYPE_BFLOAT16:
      *out = (OwbDataType) t;
      return TRUE;
    default:
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute output_datatype = %" G_GINT64_FORMAT " is not a numeric element type", t);
      return FALSE;
    }
}

static gboolean
infer_window (OwbInferContext *ctx, GError **error)
{
  OwbDataType dtype;
  if (!get_output_datatype (ctx, &dtype, error) || !_owb_infer_get_flag (ctx, "periodic", 1, NULL, error))
    return FALSE;
  int64_t size = 0;
  gboolean known;
  if (!get_scalar_int (ctx, 0, "size", &size, &known, error))
    return FALSE;
  if (known && (size < 0 || size > MAX_SIZE))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "window size %" G_GINT64_FORMAT " must be in 0..2^31",
                           size);
      return FALSE;
    }
  init_output (ctx, dtype, 1);
  if (known)
    ctx->outputs[0].dims[0] = OWB_DIM_VALUE (size);
  return TRUE;
}

static gboolean
infer_mel_weight_matrix (OwbInferContext *ctx, GError **error)
{
  OwbDataType dtype;
  if (!get_output_datatype (ctx, &dtype, error) || !check_float_input (ctx, 3, "lower_edge_hertz", error)
      || !check_float_input (ctx, 4, "upper_edge_hertz", error))
    return FALSE;
  const char *names[3] = { "num_mel_bins", "dft_length", "sample_rate" };
  int64_t v[3] = { 0, 0, 0 };
  gboolean known[3];
  for (int i = 0; i < 3; i++)
    {
      if (!get_scalar_int (ctx, i, names[i], &v[i], &known[i], error))
        return FALSE;
      if (known[i] && (v[i] < 1 || v[i] > MAX_SIZE))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s = %" G_GINT64_FORMAT " must be in 1..2^31",
                               names[i], v[i]);
          return FALSE;
        }
    }
  init_output (ctx, dtype, 2);
  if (known[1])
    ctx->outputs[0].dims[0] = OWB_DIM_VALUE (v[1] / 2 + 1);
  if (known[0])
    ctx->outputs[0].dims[1] = OWB_DIM_VALUE (v[0]);
  return TRUE;
}

/* ---- GridSample and AffineGrid ---- */

static gboolean
infer_grid_sample (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *grid = ctx->inputs[1];
  const char *mode = owb_node_get_string (ctx->node, "mode", ctx->opset >= 20 ? "linear" : "bilinear");
  const char *pad = owb_node_get_string (ctx->node, "padding_mode", "zeros");
  gboolean mode_ok = strcmp (mode, "nearest") == 0 || strcmp (mode, "bilinear") == 0 || strcmp (mode, "bicubic") == 0
                     || (ctx->opset >= 20 && (strcmp (mode, "linear") == 0 || strcmp (mode, "cubic") == 0));
  if (!mode_ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute mode = '%s' is not %s", mode,
                           ctx->opset >= 20 ? "linear, nearest or cubic" : "bilinear, nearest or bicubic");
      return FALSE;
    }
  if (strcmp (pad, "zeros") != 0 && strcmp (pad, "border") != 0 && strcmp (pad, "reflection") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute padding_mode = '%s' is not zeros, border or reflection", pad);
      return FALSE;
    }
  if (!_owb_infer_get_flag (ctx, "align_corners", 0, NULL, error) || !check_float_input (ctx, 1, "grid", error))
    return FALSE;
  int lo = ctx->opset >= 20 ? 3 : 4, hi = ctx->opset >= 20 ? OWB_MAX_RANK : 4;
  if (!check_rank (ctx, 0, "X", lo, hi, error) || !check_rank (ctx, 1, "grid", lo, hi, error))
    return FALSE;
  int rank = x->rank >= 0 ? x->rank : grid->rank;
  init_output (ctx, x->dtype, rank);
  if (rank < 0)
    return TRUE;
  if (x->rank >= 0 && grid->rank >= 0 && x->rank != grid->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "X has rank %d but grid has rank %d", x->rank, grid->rank);
      return FALSE;
    }
  if (!check_dim (ctx, 1, "grid", rank - 1, rank - 2, error))
    return FALSE;
  OwbDim nx = _owb_infer_dim (x, 0), ng = _owb_infer_dim (grid, 0);
  if (owb_dim_is_known (nx) && owb_dim_is_known (ng) && nx.value != ng.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "X has batch %" G_GINT64_FORMAT " but grid has batch %" G_GINT64_FORMAT, nx.value, ng.value);
      return FALSE;
    }
  OwbValueType *y = &ctx->outputs[0];
  y->dims[0] = owb_dim_is_known (nx) || nx.param ? nx : ng;
  y->dims[1] = _owb_infer_dim (x, 1);
  for (int i = 2; i < rank; i++)
    y->dims[i] = _owb_infer_dim (grid, i - 1);
  return TRUE;
}

static gboolean
infer_affine_grid (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *theta = ctx->inputs[0], *size = ctx->inputs[1];
  if (!_owb_infer_get_flag (ctx, "align_corners", 0, NULL, error) || !check_float_input (ctx, 0, "theta", error)
      || !check_rank (ctx, 0, "theta", 3, 3, error) || !check_rank (ctx, 1, "size", 1, 1, error))
    return FALSE;
  if (size->dtype != OWB_TYPE_INT64 && size->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input size must be int64, got %s",
                           owb_data_type_name (size->dtype));
      return FALSE;
    }
  /* The spatial rank comes from theta ([N, 2, 3] or [N, 3, 4]) or from the length of size. */
  int nsp = -1;
  OwbDim t1 = _owb_infer_dim (theta, 1), t2 = _owb_infer_dim (theta, 2), sl = _owb_infer_dim (size, 0);
  if (owb_dim_is_known (t1))
    nsp = (int) MIN (t1.value, 100);
  else if (owb_dim_is_known (sl))
    nsp = (int) MIN (sl.value - 2, 100);
  if (nsp >= 0 && nsp != 2 && nsp != 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "theta must be [N, 2, 3] (2-D) or [N, 3, 4] (3-D) and size must have 4 or 5 values");
      return FALSE;
    }
  if (nsp >= 0 && ((owb_dim_is_known (t2) && t2.value != nsp + 1) || (owb_dim_is_known (sl) && sl.value != nsp + 2)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "theta must be [N, %d, %d] and size must have %d values for a %d-D grid", nsp, nsp + 1,
                           nsp + 2, nsp);
      return FALSE;
    }
  init_output (ctx, theta->dtype, nsp < 0 ? -1 : nsp + 2);
  if (nsp < 0)
    return TRUE;
  OwbValueType *y = &ctx->outputs[0];
  y->dims[0] = _owb_infer_dim (theta, 0);
  y->dims[nsp + 1] = OWB_DIM_VALUE (nsp);
  int64_t *v = NULL, n = 0;
  if (!owb_infer_get_ints (ctx, 1, &v, &n))
    return TRUE;
  gboolean ok = TRUE;
  if (n != nsp + 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "size has %" G_GINT64_FORMAT " values, expected %d", n, nsp + 2);
      ok = FALSE;
    }
  for (int i = 0; ok && i < n; i++)
    if (v[i] < 0 || v[i] > MAX_SIZE)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "size[%d] = %" G_GINT64_FORMAT " is out of range", i,
                             v[i]);
        ok = FALSE;
      }
  OwbDim tn = _owb_infer_dim (theta, 0);
  if (ok && owb_dim_is_known (tn) && tn.value != v[0])
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "size gives batch %" G_GINT64_FORMAT " but theta has %" G_GINT64_FORMAT " matrices", v[0],
                           tn.value);
      ok = FALSE;
    }
  if (ok)
    {
      y->dims[0] = OWB_DIM_VALUE (v[0]);
      for (int i = 0; i < nsp; i++)
        y->dims[1 + i] = OWB_DIM_VALUE (v[2 + i]);
    }
  g_free (v);
  return ok;
}

/* ---- RoiAlign ---- */

static gboolean
infer_roi_align (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *rois = ctx->inputs[1], *bi = ctx->inputs[2];
  const char *mode = owb_node_get_string (ctx->node, "mode", "avg");
  if (strcmp (mode, "avg") != 0 && strcmp (mode, "max") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute mode = '%s' is not avg or max", mode);
      return FALSE;
    }
  if (ctx->opset >= 16)
    {
      const char *ctm = owb_node_get_string (ctx->node, "coordinate_transformation_mode", "half_pixel");
      if (strcmp (ctm, "half_pixel") != 0 && strcmp (ctm, "output_half_pixel") != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "attribute coordinate_transformation_mode = '%s' is not half_pixel or output_half_pixel",
                               ctm);
          return FALSE;
        }
    }
  int64_t oh = owb_node_get_int (ctx->node, "output_height", 1);
  int64_t ow = owb_node_get_int (ctx->node, "output_width", 1);
  int64_t sr = owb_node_get_int (ctx->node, "sampling_ratio", 0);
  if (oh < 1 || ow < 1 || oh > MAX_SIZE || ow > MAX_SIZE)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "output_height and output_width must be >= 1, got %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                           oh, ow);
      return FALSE;
    }
  if (sr < 0 || sr > 65536)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute sampling_ratio = %" G_GINT64_FORMAT " must be in 0..65536", sr);
      return FALSE;
    }
  if (!check_float_input (ctx, 0, "X", error) || !check_same_dtype (ctx, 0, "X", 1, "rois", error)
      || !check_rank (ctx, 0, "X", 4, 4, error) || !check_rank (ctx, 1, "rois", 2, 2, error)
      || !check_rank (ctx, 2, "batch_indices", 1, 1, error) || !check_dim (ctx, 1, "rois", 1, 4, error))
    return FALSE;
  if (bi->dtype != OWB_TYPE_INT64 && bi->dtype != OWB_TYPE_INT32 && bi->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input batch_indices must be int64, got %s",
                           owb_data_type_name (bi->dtype));
      return FALSE;
    }
  OwbDim r1 = _owb_infer_dim (rois, 0), r2 = _owb_infer_dim (bi, 0);
  if (owb_dim_is_known (r1) && owb_dim_is_known (r2) && r1.value != r2.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "rois has %" G_GINT64_FORMAT " boxes but batch_indices has %" G_GINT64_FORMAT " values",
                           r1.value, r2.value);
      return FALSE;
    }
  init_output (ctx, x->dtype, 4);
  OwbValueType *y = &ctx->outputs[0];
  y->dims[0] = owb_dim_is_known (r1) || r1.param ? r1 : r2;
  y->dims[1] = _owb_infer_dim (x, 1);
  y->dims[2] = OWB_DIM_VALUE (oh);
  y->dims[3] = OWB_DIM_VALUE (ow);
  return TRUE;
}

/* ---- NonMaxSuppression ---- */

static gboolean
infer_nms (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_get_flag (ctx, "center_point_box", 0, NULL, error) || !check_rank (ctx, 0, "boxes", 3, 3, error)
      || !check_rank (ctx, 1, "scores", 3, 3, error) || !check_dim (ctx, 0, "boxes", 2, 4, error)
      || !check_rank (ctx, 2, "max_output_boxes_per_class", 0, 1, error)
      || !check_rank (ctx, 3, "iou_threshold", 0, 1, error) || !check_rank (ctx, 4, "score_threshold", 0, 1, error))
    return FALSE;
  const OwbValueType *b = ctx->inputs[0], *s = ctx->inputs[1];
  for (int i = 0; i < 3; i += 2)
    {
      OwbDim bd = _owb_infer_dim (b, i == 0 ? 0 : 1), sd = _owb_infer_dim (s, i);
      if (owb_dim_is_known (bd) && owb_dim_is_known (sd) && bd.value != sd.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "boxes [batches, boxes, 4] and scores [batches, classes, boxes] disagree: %" G_GINT64_FORMAT
                               " vs %" G_GINT64_FORMAT,
                               bd.value, sd.value);
          return FALSE;
        }
    }
  /* The number of selected boxes depends on the data, even at run time. */
  init_output (ctx, OWB_TYPE_INT64, 2);
  ctx->outputs[0].dims[1] = OWB_DIM_VALUE (3);
  return TRUE;
}

/* ---- DeformConv ---- */

static gboolean
infer_deform_conv (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *w = ctx->inputs[1], *off = ctx->inputs[2];
  const OwbValueType *b = input_type (ctx, 3), *mask = input_type (ctx, 4);
  if (!check_float_input (ctx, 0, "X", error) || !check_same_dtype (ctx, 0, "X", 1, "W", error)
      || !check_same_dtype (ctx, 0, "X", 2, "offset", error) || !check_same_dtype (ctx, 0, "X", 3, "B", error)
      || !check_same_dtype (ctx, 0, "X", 4, "mask", error) || !check_rank (ctx, 3, "B", 1, 1, error))
    return FALSE;
  int rank = x->rank >= 0 ? x->rank : (w->rank >= 0 ? w->rank : off->rank);
  init_output (ctx, x->dtype, rank);
  if (rank < 0)
    return TRUE;
  if (rank < 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "X must have rank >= 3 (batch, channels, spatial axes...), got %d",
                           rank);
      return FALSE;
    }
  const OwbValueType *all[4] = { x, w, off, mask };
  const char *names[4] = { "X", "W", "offset", "mask" };
  for (int i = 0; i < 4; i++)
    if (all[i] && all[i]->rank >= 0 && all[i]->rank != rank)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s has rank %d, expected %d", names[i],
                             all[i]->rank, rank);
        return FALSE;
      }
  int nsp = rank - 2;
  int64_t group = owb_node_get_int (ctx->node, "group", 1);
  int64_t og = owb_node_get_int (ctx->node, "offset_group", 1);
  if (group < 1 || group > MAX_SIZE || og < 1 || og > MAX_SIZE)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "group (%" G_GINT64_FORMAT ") and offset_group (%" G_GINT64_FORMAT ") must be >= 1", group, og);
      return FALSE;
    }
  int64_t kernel[OWB_MAX_RANK], strides[OWB_MAX_RANK], dil[OWB_MAX_RANK], pads[2 * OWB_MAX_RANK];
  gboolean have_kernel;
  if (!_owb_infer_get_conv_ints (ctx, "kernel_shape", nsp, 0, 1, kernel, &have_kernel, error)
      || !_owb_infer_get_conv_ints (ctx, "strides", nsp, 1, 1, strides, NULL, error)
      || !_owb_infer_get_conv_ints (ctx, "dilations", nsp, 1, 1, dil, NULL, error)
      || !_owb_infer_get_conv_ints (ctx, "pads", 2 * nsp, 0, 0, pads, NULL, error))
    return FALSE;
  int64_t ksize = 1;
  for (int i = 0; i < nsp; i++)
    {
      OwbDim kd = _owb_infer_dim (w, 2 + i);
      if (have_kernel && owb_dim_is_known (kd) && kd.value != kernel[i])
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "kernel_shape[%d] = %" G_GINT64_FORMAT " does not match weight dim %" G_GINT64_FORMAT, i,
                               kernel[i], kd.value);
          return FALSE;
        }
      if (!have_kernel)
        kernel[i] = owb_dim_is_known (kd) ? kd.value : -1;
      if (kernel[i] == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "weight W has an empty kernel axis %d", 2 + i);
          return FALSE;
        }
      ksize = ksize < 0 || kernel[i] < 0 ? -1 : MIN (ksize * kernel[i], MAX_SIZE);
    }
  OwbDim c = _owb_infer_dim (x, 1), wc = _owb_infer_dim (w, 1), oc = _owb_infer_dim (w, 0);
  if (owb_dim_is_known (c) && (c.value % group != 0 || c.value % og != 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT
                           " and offset_group %" G_GINT64_FORMAT,
                           c.value, group, og);
      return FALSE;
    }
  if (owb_dim_is_known (c) && owb_dim_is_known (wc) && c.value != wc.value * group)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input has %" G_GINT64_FORMAT " channels but the weight expects %" G_GINT64_FORMAT
                           " x group %" G_GINT64_FORMAT,
                           c.value, wc.value, group);
      return FALSE;
    }
  if (owb_dim_is_known (oc) && oc.value % group != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "output channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT, oc.value,
                           group);
      return FALSE;
    }
  if (ksize > 0 && !check_dim (ctx, 2, "offset", 1, og * ksize * nsp, error))
    return FALSE;
  if (ksize > 0 && mask && !check_dim (ctx, 4, "mask", 1, og * ksize, error))
    return FALSE;
  OwbDim bd = _owb_infer_dim (b, 0);
  if (owb_dim_is_known (bd) && owb_dim_is_known (oc) && bd.value != oc.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "bias B has %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT " output channels", bd.value,
                           oc.value);
      return FALSE;
    }
  OwbValueType *y = &ctx->outputs[0];
  y->dims[0] = _owb_infer_dim (x, 0);
  y->dims[1] = oc;
  for (int i = 0; i < nsp; i++)
    {
      OwbDim in = _owb_infer_dim (x, 2 + i);
      OwbDim out = _owb_infer_dim (off, 2 + i);
      if (owb_dim_is_known (in) && kernel[i] > 0)
        {
          int64_t dk = (kernel[i] - 1) * dil[i] + 1;
          int64_t padded = in.value + pads[i] + pads[nsp + i];
          if (in.value > MAX_SIZE || padded < dk)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "kernel extent %" G_GINT64_FORMAT " on spatial axis %d is larger than the padded "
                                   "input (%" G_GINT64_FORMAT ")",
                                   dk, i, padded);
              return FALSE;
            }
          int64_t v = (padded - dk) / strides[i] + 1;
          if (owb_dim_is_known (out) && out.value != v)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "offset has %" G_GINT64_FORMAT " positions on spatial axis %d but the convolution "
                                   "gives %" G_GINT64_FORMAT,
                                   out.value, i, v);
              return FALSE;
            }
          out = OWB_DIM_VALUE (v);
        }
      y->dims[2 + i] = out;
    }
  return TRUE;
}

const OwbOpSchema _owb_ops_signal[] = {
  { "DFT", "", 17, 1, 2, 1, 1, infer_dft },
  { "DFT", "", 20, 1, 3, 1, 1, infer_dft },
  { "STFT", "", 17, 2, 4, 1, 1, infer_stft },
  { "HannWindow", "", 17, 1, 1, 1, 1, infer_window },
  { "HammingWindow", "", 17, 1, 1, 1, 1, infer_window },
  { "BlackmanWindow", "", 17, 1, 1, 1, 1, infer_window },
  { "MelWeightMatrix", "", 17, 5, 5, 1, 1, infer_mel_weight_matrix },
  { "GridSample", "", 16, 2, 2, 1, 1, infer_grid_sample },
  { "AffineGrid", "", 20, 2, 2, 1, 1, infer_affine_grid },
  { "RoiAlign", "", 10, 3, 3, 1, 1, infer_roi_align },
  { "NonMaxSuppression", "", 10, 2, 5, 1, 1, infer_nms },
  { "DeformConv", "", 19, 3, 5, 1, 1, infer_deform_conv },
  { NULL }
};
