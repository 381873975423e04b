/* owb-arena.h: per-run buffer reuse. Tensors released during a run give their memory back to the
 * arena, and later allocations of a similar size take it again, so a run's footprint follows the
 * live tensors (the memory plan by lifetime) rather than the sum of all of them. */
#pragma once

#include <owb/owb-tensor.h>

typedef struct _OwbArena OwbArena;

OwbArena *_owb_arena_new (void);
/* Ends the run: cached buffers are freed; buffers still held (returned outputs) are freed when
 * their tensors go. */
void _owb_arena_close (OwbArena *arena);
OwbTensor *_owb_arena_new_tensor (OwbArena *arena, OwbDataType dtype, int rank, const int64_t *dims, GError **error);
gsize _owb_arena_get_peak (const OwbArena *arena);
gsize _owb_arena_get_allocated (const OwbArena *arena);
