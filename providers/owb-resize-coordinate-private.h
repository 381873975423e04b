/* owb-resize-coordinate-private.h: where Resize samples, shared by the CPU kernel
 * (cpu/kernels/resize.c) and the CUDA one (cuda/kernels/resize.c) so that both map an output index
 * to the same input taps: the coordinate transformation modes, the nearest modes and the index
 * clamp, as the ONNX reference computes them (in double). */
#pragma once

#include <glib.h>
#include <math.h>
#include <stdint.h>

/* In the order of OWB_RESIZE_COORD_NAMES. */
typedef enum {
  OWB_RESIZE_COORD_HALF_PIXEL,
  OWB_RESIZE_COORD_HALF_PIXEL_SYMMETRIC,
  OWB_RESIZE_COORD_PYTORCH_HALF_PIXEL,
  OWB_RESIZE_COORD_ALIGN_CORNERS,
  OWB_RESIZE_COORD_ASYMMETRIC,
  OWB_RESIZE_COORD_TF_CROP_AND_RESIZE,
  OWB_RESIZE_COORD_TF_HALF_PIXEL_FOR_NN
} OwbResizeCoord;
#define OWB_RESIZE_COORD_NAMES                                                                                       \
  { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize", \
    "tf_half_pixel_for_nn", NULL }

/* In the order of OWB_RESIZE_NEAREST_NAMES. SIMPLE: Resize-10 and Upsample, which predate
 * nearest_mode: ceil when shrinking, else floor (what ONNX Runtime does for them). */
typedef enum {
  OWB_RESIZE_NEAREST_ROUND_PREFER_FLOOR,
  OWB_RESIZE_NEAREST_ROUND_PREFER_CEIL,
  OWB_RESIZE_NEAREST_FLOOR,
  OWB_RESIZE_NEAREST_CEIL,
  OWB_RESIZE_NEAREST_SIMPLE
} OwbResizeNearest;
#define OWB_RESIZE_NEAREST_NAMES { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL }

/* x_original for output coordinate y, as the ONNX reference maps it; roi_start and roi_end (and
 * roi_float, a float32 roi) matter only to tf_crop_and_resize. */
static inline double
_owb_resize_coordinate (OwbResizeCoord mode, double y, double scale, int64_t in, int64_t out, double roi_start,
                        double roi_end, gboolean roi_float)
{
  double width = scale * (double) in; /* fractional output length */
  switch (mode)
    {
    case OWB_RESIZE_COORD_HALF_PIXEL:
      return (y + 0.5) / scale - 0.5;
    case OWB_RESIZE_COORD_HALF_PIXEL_SYMMETRIC:
      {
        double adjustment = (double) out / width;
        double center = (double) in / 2;
        double offset = center * (1 - adjustment);
        return offset + (y + 0.5) / scale - 0.5;
      }
    case OWB_RESIZE_COORD_PYTORCH_HALF_PIXEL:
      return width == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    case OWB_RESIZE_COORD_ALIGN_CORNERS:
      return width == 1 ? 0 : y * (double) (in - 1) / (width - 1);
    case OWB_RESIZE_COORD_ASYMMETRIC:
      return y / scale;
    case OWB_RESIZE_COORD_TF_CROP_AND_RESIZE:
      if (roi_float)
        {
          /* A float32 roi is combined in float32 (as the reference and ONNX Runtime do), which
           * decides which pixel a nearest sample lands on at exact edges. */
          float extent = (float) roi_end - (float) roi_start;
          float offset = (float) roi_start * (float) (in - 1);
          if (width == 1)
            return (double) (extent * (float) (in - 1) / 2 + offset);
          return y * (double) extent * (double) (in - 1) / (width - 1) + (double) offset;
        }
      if (width == 1)
        return (roi_end - roi_start) * (double) (in - 1) / 2 + roi_start * (double) (in - 1);
      return y * (roi_end - roi_start) * (double) (in - 1) / (width - 1) + roi_start * (double) (in - 1);
    case OWB_RESIZE_COORD_TF_HALF_PIXEL_FOR_NN:
      return (y + 0.5) / scale;
    }
  return y;
}

/* A sample position made usable: not finite -> 0, and bounded so that floor() fits an int64. */
static inline double
_owb_resize_bound (double x)
{
  if (!isfinite (x))
    x = 0;
  return CLAMP (x, -1e15, 1e15);
}

/* An input index in [0, in): positions before the first element read it, past the last the last. */
static inline int64_t
_owb_resize_clamp_index (double v, int64_t in)
{
  if (!(v > 0))
    return 0;
  if (v >= (double) (in - 1))
    return in - 1;
  return (int64_t) v;
}

/* The input index a nearest sample at (bounded) position x reads. */
static inline int64_t
_owb_resize_nearest_index (OwbResizeNearest mode, double x, double scale, int64_t in)
{
  double base = floor (x), ratio = x - base, n = base;
  if (ratio != 0)
    switch (mode)
      {
      case OWB_RESIZE_NEAREST_ROUND_PREFER_FLOOR:
        n = ratio <= 0.5 ? base : base + 1;
        break;
      case OWB_RESIZE_NEAREST_ROUND_PREFER_CEIL:
        n = ratio < 0.5 ? base : base + 1;
        break;
      case OWB_RESIZE_NEAREST_FLOOR:
        break;
      case OWB_RESIZE_NEAREST_CEIL:
        n = base + 1;
        break;
      case OWB_RESIZE_NEAREST_SIMPLE:
        n = scale < 1 ? base + 1 : trunc (x);
        break;
      }
  return _owb_resize_clamp_index (n, in);
}
