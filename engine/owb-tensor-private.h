/* owb-tensor-private.h: tensor functions for the engine's own use. */
#pragma once

#include <owb/owb-tensor.h>

G_BEGIN_DECLS

/* Frees a tensor's storage and leaves data NULL, its type and shape as they were: for a weight
 * whose values now live elsewhere (a kernel's packed copy) and of which only the shape is read.
 * Not for strings or sequences. */
void _owb_tensor_release_storage (OwbTensor *tensor);

/* Bytes one element takes in memory: sub-byte types are held unpacked, one per byte; 0 for strings
 * (pointers, not plain data) and unknown types. */
gsize _owb_data_type_memory_size (OwbDataType dtype);

/* float, double, float16 or bfloat16: the types the engine computes with in floating point (the
 * ops' type checks, casts, comparisons). The 8-bit float types are storage formats, not listed. */
static inline gboolean
_owb_data_type_is_float (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16 || t == OWB_TYPE_BFLOAT16;
}

G_END_DECLS
