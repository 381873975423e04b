/* owb-tensor-private.h: tensor functions for the engine's own use. */
#pragma once

#include <owb/owb-tensor.h>

G_BEGIN_DECLS

/* Frees a tensor's storage and leaves data NULL, its type and shape as they were: for a weight
 * whose values now live elsewhere (a kernel's packed copy) and of which only the shape is read.
 * Not for strings or sequences. */
void _owb_tensor_release_storage (OwbTensor *tensor);

G_END_DECLS
