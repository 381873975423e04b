/* owb-parallel.h: parallel loops with the caller's estimate of their work. */
#pragma once

#include <owb/owb-provider.h>

G_BEGIN_DECLS

/* Below this much estimated work a loop runs on the caller alone: waking a sleeping worker, and
 * closing the job behind it, costs a few microseconds (a futex wake, a scheduler slice on a busy
 * machine), more than a small MatMul of a recurrent step or a one-token decoder takes. */
#define OWB_PARALLEL_INLINE_NS 4000

/* owb_parallel_for, where work_ns is the caller's estimate of the whole loop's time on one thread
 * (a count of multiply-adds divided by the kernel's rate is close enough). Under
 * OWB_PARALLEL_INLINE_NS it calls fn (0, n, data) on the calling thread. */
OWB_API void owb_parallel_for_work (OwbThreadPool *pool, int64_t n, int64_t grain, int64_t work_ns,
                                    OwbParallelFunc fn, gpointer data);

G_END_DECLS
