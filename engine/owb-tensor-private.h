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

G_END_DECLS
