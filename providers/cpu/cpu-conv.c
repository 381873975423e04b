/* cpu-conv.c: Conv-family attribute parsing and geometry shared by the CPU convolution kernels. */
#include "cpu-conv-private.h"

#include <stdarg.h>
#include <string.h>

#define MAX_CONV_ATTR (G_GINT64_CONSTANT (1) << 31)

static int64_t
floor_half (int64_t v)
{
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

/* [lo, hi): the positions j in [0, n) with 0 <= j * s + off < limit. */
void
_owb_cpu_conv_valid_range (int64_t off, int64_t s, int64_t limit, int64_t n, int64_t *lo, int64_t *hi)
{
  int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t h = limit - off <= 0 ? 0 : (limit - off + s - 1) / s;
  *lo = MIN (l, n);
  *hi = CLAMP (h, *lo, n);
}

static gboolean
read_ints (const OwbNode *node, const char *name, int max, int64_t lo, int64_t *out, int *n_out, GError **error)
{
  int n = 0;
  const int64_t *v = owb_node_get_ints (node, name, &n);
  *n_out = v ? n : 0;
  if (!v)
    return TRUE;
  if (n > max)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s has too many values (%d)", name, n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (v[i] < lo || v[i] > MAX_CONV_ATTR)
        {
          _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s[%d] = %" G_GINT64_FORMAT " is out of range",
                      name, i, v[i]);
          return FALSE;
        }
      out[i] = v[i];
    }
  return TRUE;
}

gboolean
_owb_cpu_conv_params_parse (const OwbNode *node, OwbCpuConvParams *p, GError **error)
{
  memset (p, 0, sizeof *p);
  p->group = owb_node_get_int (node, "group", 1);
  const char *ap = owb_node_get_string (node, "auto_pad", "NOTSET");
  if (p->group < 1 || p->group > MAX_CONV_ATTR)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute group = %" G_GINT64_FORMAT " must be >= 1",
                  p->group);
      return FALSE;
    }
  if (ap[0] == '\0' || strcmp (ap, "NOTSET") == 0)
    p->auto_pad = OWB_CPU_PAD_NOTSET;
  else if (strcmp (ap, "SAME_UPPER") == 0)
    p->auto_pad = OWB_CPU_PAD_SAME_UPPER;
  else if (strcmp (ap, "SAME_LOWER") == 0)
    p->auto_pad = OWB_CPU_PAD_SAME_LOWER;
  else if (strcmp (ap, "VALID") == 0)
    p->auto_pad = OWB_CPU_PAD_VALID;
  else
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute auto_pad = '%s' is not supported", ap);
      return FALSE;
    }
  if (!read_ints (node, "kernel_shape", OWB_MAX_RANK, 1, p->kernel, &p->n_kernel, error)
      || !read_ints (node, "strides", OWB_MAX_RANK, 1, p->strides, &p->n_strides, error)
      || !read_ints (node, "dilations", OWB_MAX_RANK, 1, p->dilations, &p->n_dilations, error)
      || !read_ints (node, "pads", 2 * OWB_MAX_RANK, 0, p->pads, &p->n_pads, error)
      || !read_ints (node, "output_padding", OWB_MAX_RANK, 0, p->output_padding, &p->n_output_padding, error)
      || !read_ints (node, "output_shape", OWB_MAX_RANK + 2, 1, p->output_shape, &p->n_output_shape, error))
    return FALSE;
  return TRUE;
}

static gboolean
check_len (OwbKernelContext *ctx, const char *name, int n, int want, GError **error)
{
  if (n != 0 && n != want)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s has %d values, expected %d", name, n,
                            want);
      return FALSE;
    }
  return TRUE;
}

gboolean
_owb_cpu_conv_geometry (OwbKernelContext *ctx, const OwbCpuConvParams *p, const OwbTensor *x, const OwbTensor *w,
                        const OwbTensor *y, gboolean transpose, OwbCpuConvGeom *g, GError **error)
{
  memset (g, 0, sizeof *g);
  if (x->rank < 3 || w->rank != x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X (rank %d) and W (rank %d) must have the same rank >= 3",
                            x->rank, w->rank);
      return FALSE;
    }
  int nsp = g->nsp = x->rank - 2;
  if (!check_len (ctx, "kernel_shape", p->n_kernel, nsp, error) || !check_len (ctx, "strides", p->n_strides, nsp, error)
      || !check_len (ctx, "dilations", p->n_dilations, nsp, error)
      || !check_len (ctx, "pads", p->n_pads, 2 * nsp, error)
      || !check_len (ctx, "output_padding", p->n_output_padding, nsp, error))
    return FALSE;
  if (p->n_output_shape != 0 && p->n_output_shape != nsp && p->n_output_shape != nsp + 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute output_shape has %d values, expected %d",
                            p->n_output_shape, nsp);
      return FALSE;
    }
  g->N = x->dims[0];
  g->C = x->dims[1];
  g->group = p->group;
  if (g->C % g->group != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "input channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT, g->C,
                            g->group);
      return FALSE;
    }
  g->Cg = g->C / g->group;
  if (!transpose)
    {
      g->M = w->dims[0];
      if (w->dims[1] != g->Cg || g->M % g->group != 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "weight shape [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", ...] does not fit %" G_GINT64_FORMAT
                                " input channels in %" G_GINT64_FORMAT " groups",
                                w->dims[0], w->dims[1], g->C, g->group);
          return FALSE;
        }
      g->Mg = g->M / g->group;
    }
  else
    {
      if (w->dims[0] != g->C)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "weight dim 0 (%" G_GINT64_FORMAT ") must equal the input channels (%" G_GINT64_FORMAT ")",
                                w->dims[0], g->C);
          return FALSE;
        }
      g->Mg = w->dims[1];
      g->M = g->Mg * g->group;
    }
  g->in_size = g->out_size = g->ksize = 1;
  for (int i = 0; i < nsp; i++)
    {
      int64_t in = x->dims[2 + i], k = w->dims[2 + i];
      int64_t s = p->n_strides ? p->strides[i] : 1, d = p->n_dilations ? p->dilations[i] : 1;
      int64_t pb = p->n_pads ? p->pads[i] : 0, pe = p->n_pads ? p->pads[nsp + i] : 0;
      if (k < 1 || (p->n_kernel && p->kernel[i] != k))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "weight kernel axis %d has size %" G_GINT64_FORMAT, i, k);
          return FALSE;
        }
      if (in > G_MAXINT64 / 4 / s)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input axis %d is too large", 2 + i);
          return FALSE;
        }
      int64_t dk = (k - 1) * d + 1, out, pad;
      gboolean same = p->auto_pad == OWB_CPU_PAD_SAME_UPPER || p->auto_pad == OWB_CPU_PAD_SAME_LOWER;
      if (!transpose)
        {
          if (same)
            {
              out = (in + s - 1) / s;
              int64_t total = MAX ((out - 1) * s + dk - in, 0);
              pad = p->auto_pad == OWB_CPU_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            }
          else
            {
              if (p->auto_pad == OWB_CPU_PAD_VALID)
                pb = pe = 0;
              if (in + pb + pe < dk)
                {
                  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                        "kernel extent %" G_GINT64_FORMAT " on spatial axis %d is larger than the padded "
                                        "input (%" G_GINT64_FORMAT ")",
                                        dk, i, in + pb + pe);
                  return FALSE;
                }
              out = (in + pb + pe - dk) / s + 1;
              pad = pb;
            }
        }
      else
        {
          int64_t op = p->n_output_padding ? p->output_padding[i] : 0;
          int64_t full = s * (in > 0 ? in - 1 : 0) + op + dk;
          if (p->n_output_shape || same)
            {
              /* The output size is given: the padding follows from it (ONNX's total_padding rule). */
              out = p->n_output_shape ? p->output_shape[p->n_output_shape - nsp + i] : in * s;
              int64_t total = full - out;
              pad = p->auto_pad == OWB_CPU_PAD_SAME_UPPER ? floor_half (total) : total - floor_half (total);
              if (!same)
                pad = MAX (pad, 0);
            }
          else
            {
              if (p->auto_pad == OWB_CPU_PAD_VALID)
                pb = pe = 0;
              out = full - pb - pe;
              pad = pb;
            }
          if (in == 0)
            out = p->n_output_shape ? out : 0;
        }
      if (out < 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output size on spatial axis %d would be negative", i);
          return FALSE;
        }
      g->in[i] = in;
      g->out[i] = out;
      g->k[i] = k;
      g->s[i] = s;
      g->d[i] = d;
      g->pad[i] = pad;
      g->in_size *= in;
      g->out_size *= out;
      g->ksize *= k;
    }
  gboolean match = y->rank == x->rank && y->dims[0] == g->N && y->dims[1] == g->M;
  for (int i = 0; match && i < nsp; i++)
    match = y->dims[2 + i] == g->out[i];
  if (!match)
    {
      char *have = owb_tensor_shape_to_string (y);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output was allocated as %s, which does not match the attributes",
                            have);
      g_free (have);
      return FALSE;
    }
  if (g->Cg * g->ksize > INT_MAX || g->Mg * g->ksize > INT_MAX || g->in_size > INT_MAX || g->out_size > INT_MAX
      || g->Mg > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "convolution is too large for 32-bit BLAS indices");
      return FALSE;
    }
  return TRUE;
}

OwbTensor
_owb_cpu_conv_nchw_view (const OwbTensor *t)
{
  OwbTensor v = *t;
  v.dims[1] = t->dims[3];
  v.dims[2] = t->dims[1];
  v.dims[3] = t->dims[2];
  return v;
}

gboolean
_owb_cpu_conv_check_bias (OwbKernelContext *ctx, const OwbTensor *b, const OwbCpuConvGeom *g, OwbDataType dtype,
                          GError **error)
{
  if (b && (b->rank != 1 || b->dims[0] != g->M || b->dtype != dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias B must be a vector of %" G_GINT64_FORMAT " values", g->M);
      return FALSE;
    }
  return TRUE;
}
