/* owb-arena.c: see owb-arena.h. */
#include "owb-arena.h"
#include <owb/owb-device.h>
#include <owb/owb-error.h>

#include "../owb-tensor-private.h"

#define ALIGN 64

struct _OwbArena {
  gint ref_count;
  GMutex lock;
  gboolean closed;
  GPtrArray *free_blocks; /* of Block *, each holding an arena reference */
  gsize live, peak, allocated;
  gsize base;   /* live bytes when the run began (outputs of earlier runs still held) */
  guint run;    /* generation of the current run */
  gsize limit;  /* of live - base; 0: none */
  OwbDevice *device; /* whose memory the blocks are; NULL: the host's */
};

typedef struct {
  OwbArena *arena;
  gsize size;
  void *raw;
  void *data;
  guint run; /* the last run that took it */
} Block;

static void
arena_unref (OwbArena *arena)
{
  if (!g_atomic_int_dec_and_test (&arena->ref_count))
    return;
  g_ptr_array_unref (arena->free_blocks);
  g_mutex_clear (&arena->lock);
  g_free (arena);
}

/* A block of fresh memory (raw as allocated, data aligned in it), taken by the current run; it
 * holds an arena reference. */
static Block *
block_new (OwbArena *arena, void *raw, void *data, gsize size)
{
  Block *block = g_new (Block, 1);
  block->raw = raw;
  block->data = data;
  block->size = size;
  block->arena = arena;
  g_atomic_int_inc (&arena->ref_count);
  g_mutex_lock (&arena->lock);
  block->run = arena->run;
  arena->allocated += size;
  g_mutex_unlock (&arena->lock);
  return block;
}

static void
block_free (Block *block)
{
  OwbArena *arena = block->arena;
  if (arena->device)
    arena->device->free (arena->device, block->raw, block->size);
  else
    g_free (block->raw);
  g_free (block);
  arena_unref (arena);
}

static void
block_release (gpointer data)
{
  Block *block = data;
  OwbArena *arena = block->arena;
  g_mutex_lock (&arena->lock);
  arena->live -= block->size;
  if (!arena->closed)
    {
      g_ptr_array_add (arena->free_blocks, block);
      g_mutex_unlock (&arena->lock);
      return;
    }
  g_mutex_unlock (&arena->lock);
  block_free (block);
}

OwbArena *
_owb_arena_new (void)
{
  return _owb_arena_new_for_device (NULL);
}

OwbArena *
_owb_arena_new_for_device (OwbDevice *device)
{
  OwbArena *arena = g_new0 (OwbArena, 1);
  arena->device = device;
  arena->ref_count = 1;
  g_mutex_init (&arena->lock);
  arena->free_blocks = g_ptr_array_new ();
  return arena;
}

void
_owb_arena_close (OwbArena *arena)
{
  g_mutex_lock (&arena->lock);
  arena->closed = TRUE;
  GPtrArray *blocks = arena->free_blocks;
  arena->free_blocks = g_ptr_array_new ();
  g_mutex_unlock (&arena->lock);
  for (guint i = 0; i < blocks->len; i++)
    block_free (g_ptr_array_index (blocks, i));
  g_ptr_array_unref (blocks);
  arena_unref (arena);
}

void
_owb_arena_begin_run (OwbArena *arena)
{
  g_mutex_lock (&arena->lock);
  arena->run++;
  arena->base = arena->peak = arena->live;
  arena->allocated = 0;
  g_mutex_unlock (&arena->lock);
}

void
_owb_arena_end_run (OwbArena *arena)
{
  GPtrArray *stale = g_ptr_array_new ();
  g_mutex_lock (&arena->lock);
  for (guint i = 0; i < arena->free_blocks->len;)
    {
      Block *b = g_ptr_array_index (arena->free_blocks, i);
      if (b->run != arena->run)
        g_ptr_array_add (stale, g_ptr_array_steal_index (arena->free_blocks, i));
      else
        i++;
    }
  g_mutex_unlock (&arena->lock);
  for (guint i = 0; i < stale->len; i++)
    block_free (g_ptr_array_index (stale, i));
  g_ptr_array_unref (stale);
}

void
_owb_arena_set_limit (OwbArena *arena, gsize limit)
{
  arena->limit = limit;
}

static gboolean
check_limit_locked (OwbArena *arena, gsize extra, GError **error)
{
  gsize in_use = arena->live >= arena->base ? arena->live - arena->base : 0;
  if (arena->limit == 0 || (in_use <= arena->limit && extra <= arena->limit - in_use))
    return TRUE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM,
               "the run would hold more than its memory limit of %" G_GSIZE_FORMAT " bytes (%" G_GSIZE_FORMAT
               " in use, %" G_GSIZE_FORMAT " more asked)", arena->limit, in_use, extra);
  return FALSE;
}

gboolean
_owb_arena_check_limit (OwbArena *arena, gsize extra, GError **error)
{
  g_mutex_lock (&arena->lock);
  gboolean ok = check_limit_locked (arena, extra, error);
  g_mutex_unlock (&arena->lock);
  return ok;
}

static Block *
take_block (OwbArena *arena, gsize size, GError **error)
{
  g_mutex_lock (&arena->lock);
  if (!check_limit_locked (arena, size, error))
    {
      g_mutex_unlock (&arena->lock);
      return NULL;
    }
  /* Best fit among cached blocks, but not one more than twice too big (that would waste more
   * than a fresh allocation costs). The list is in release order and ties go to the block released
   * last, which is the most likely to be still in cache. */
  int best = -1;
  for (int i = (int) arena->free_blocks->len - 1; i >= 0; i--)
    {
      Block *b = g_ptr_array_index (arena->free_blocks, i);
      if (b->size >= size && b->size <= 2 * size
          && (best < 0 || b->size < ((Block *) g_ptr_array_index (arena->free_blocks, best))->size))
        best = i;
    }
  Block *block = NULL;
  if (best >= 0)
    {
      /* a cached block: counted under the same lock, the usual case of every run after the first */
      block = g_ptr_array_steal_index (arena->free_blocks, best);
      block->run = arena->run;
      arena->live += block->size;
      arena->peak = MAX (arena->peak, arena->live);
      g_mutex_unlock (&arena->lock);
      return block;
    }
  g_mutex_unlock (&arena->lock);
  if (!block && arena->device)
    {
      /* Device allocators align for their own hardware. */
      void *raw = arena->device->alloc (arena->device, size, error);
      if (!raw)
        return NULL;
      block = block_new (arena, raw, raw, size);
    }
  if (!block)
    {
      void *raw = size <= G_MAXSIZE - ALIGN ? g_try_malloc (size + ALIGN) : NULL;
      if (!raw)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "cannot allocate %" G_GSIZE_FORMAT " bytes", size);
          return NULL;
        }
      block = block_new (arena, raw, (void *) (((guintptr) raw + ALIGN - 1) & ~(guintptr) (ALIGN - 1)), size);
    }
  g_mutex_lock (&arena->lock);
  arena->live += block->size;
  arena->peak = MAX (arena->peak, arena->live);
  g_mutex_unlock (&arena->lock);
  return block;
}

OwbTensor *
_owb_arena_new_tensor (OwbArena *arena, OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  int64_t n;
  gsize elem = _owb_data_type_memory_size (dtype);
  if (arena->device && (dtype == OWB_TYPE_STRING || elem == 0))
    return owb_device_new_tensor (arena->device, dtype, rank, dims, error); /* fails with the reason */
  if (dtype == OWB_TYPE_STRING || elem == 0)
    return owb_tensor_new (dtype, rank, dims, error);
  if (!owb_shape_count (rank, dims, &n, "tensor", error))
    return NULL;
  if (n == 0)
    return arena->device ? owb_device_new_tensor (arena->device, dtype, rank, dims, error)
                         : owb_tensor_new (dtype, rank, dims, error);
  if ((guint64) n > G_MAXSIZE / elem)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "a tensor of %" G_GINT64_FORMAT " elements is too large", n);
      return NULL;
    }
  Block *block = take_block (arena, (gsize) n * elem, error);
  if (!block)
    return NULL;
  OwbTensor *t = owb_tensor_new_wrap (dtype, rank, dims, block->data, block_release, block, error);
  if (t)
    t->device = arena->device;
  return t;
}

gsize
_owb_arena_get_peak (const OwbArena *arena)
{
  return arena->peak >= arena->base ? arena->peak - arena->base : 0;
}

gsize
_owb_arena_get_allocated (const OwbArena *arena)
{
  return arena->allocated;
}

gsize
_owb_arena_get_in_use (const OwbArena *arena)
{
  return arena->live >= arena->base ? arena->live - arena->base : 0;
}
