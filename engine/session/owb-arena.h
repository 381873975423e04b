/* owb-arena.h: buffer reuse within and across runs. Tensors released during a run give their memory
 * back to the arena, and later allocations of a similar size take it again, so a run's footprint
 * follows the live tensors (the memory plan by lifetime) rather than the sum of all of them. A
 * session keeps its arenas between runs, so a steady-state run allocates (and page-faults) nothing. */
#pragma once

#include <owb/owb-tensor.h>

typedef struct _OwbArena OwbArena;

OwbArena *_owb_arena_new (void);
/* An arena of a device's memory (owb-device.h): its tensors have that device. */
OwbArena *_owb_arena_new_for_device (OwbDevice *device);
/* Ends the arena: cached buffers are freed; buffers still held (returned outputs) are freed when
 * their tensors go. */
void _owb_arena_close (OwbArena *arena);
/* Starts a run on a kept arena: the statistics restart from what is live now. */
void _owb_arena_begin_run (OwbArena *arena);
/* Ends a run on a kept arena: cached buffers that this run did not use are freed, so the cache
 * follows the latest run's needs (a smaller input shape does not keep a larger one's memory). */
void _owb_arena_end_run (OwbArena *arena);
/* Bytes of tensors a run may hold at once (0: no limit); a buffer past it is OWB_ERROR_NOMEM. */
void _owb_arena_set_limit (OwbArena *arena, gsize limit);
/* FALSE with OWB_ERROR_NOMEM when `extra` more bytes would pass the limit. */
gboolean _owb_arena_check_limit (OwbArena *arena, gsize extra, GError **error);
OwbTensor *_owb_arena_new_tensor (OwbArena *arena, OwbDataType dtype, int rank, const int64_t *dims, GError **error);
/* Both since the last _owb_arena_begin_run (or the arena's creation). */
gsize _owb_arena_get_peak (const OwbArena *arena);
gsize _owb_arena_get_allocated (const OwbArena *arena);
/* Bytes of the tensors made since the last _owb_arena_begin_run that are still held. */
gsize _owb_arena_get_in_use (const OwbArena *arena);
