/* owb-trace-private.h: what a traced run needs from the thread pool: the clock, and the spans of
 * the workers that helped with the current node's parallel loops. */
#pragma once

#include <glib.h>
#include <time.h>

typedef struct {
  gint64 start_ns; /* 0: the worker ran no chunk of the node */
  gint64 end_ns;
  gint64 busy_ns;
} _OwbWorkerTrace;

static inline gint64
_owb_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* Makes the parallel loops that this thread starts record their workers' spans in spans (one per
 * pool thread; NULL: record nothing, the default). Returns the previous value, for nesting. */
_OwbWorkerTrace *_owb_thread_pool_swap_trace (_OwbWorkerTrace *spans);
