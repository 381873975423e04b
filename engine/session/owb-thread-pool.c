/* owb-thread-pool.c: one intra-op pool per session; parallel_for splits a range over its threads. */
#include <owb/owb-provider.h>

struct _OwbThreadPool {
  int n_threads;
  GThread **threads;
  GMutex lock;        /* guards the job fields and generation */
  GCond work_cond;
  GCond done_cond;
  GMutex run_lock;    /* one parallel_for at a time (concurrent session runs share the pool) */
  guint64 generation;
  gboolean quit;
  /* current job */
  OwbParallelFunc fn;
  gpointer data;
  int64_t n, chunk;
  gint next_chunk;    /* atomic */
  int n_chunks;
  int busy;           /* workers still in the job */
};

static void
run_chunks (OwbThreadPool *pool)
{
  for (;;)
    {
      int c = g_atomic_int_add (&pool->next_chunk, 1);
      if (c >= pool->n_chunks)
        break;
      int64_t begin = (int64_t) c * pool->chunk;
      int64_t end = MIN (begin + pool->chunk, pool->n);
      pool->fn (begin, end, pool->data);
    }
}

static gpointer
worker (gpointer data)
{
  OwbThreadPool *pool = data;
  guint64 seen = 0;
  g_mutex_lock (&pool->lock);
  for (;;)
    {
      while (!pool->quit && pool->generation == seen)
        g_cond_wait (&pool->work_cond, &pool->lock);
      if (pool->quit)
        break;
      seen = pool->generation;
      g_mutex_unlock (&pool->lock);
      run_chunks (pool);
      g_mutex_lock (&pool->lock);
      if (--pool->busy == 0)
        g_cond_signal (&pool->done_cond);
    }
  g_mutex_unlock (&pool->lock);
  return NULL;
}

OwbThreadPool *
owb_thread_pool_new (int n_threads)
{
  OwbThreadPool *pool = g_new0 (OwbThreadPool, 1);
  pool->n_threads = MAX (n_threads, 1);
  g_mutex_init (&pool->lock);
  g_mutex_init (&pool->run_lock);
  g_cond_init (&pool->work_cond);
  g_cond_init (&pool->done_cond);
  pool->threads = g_new0 (GThread *, pool->n_threads);
  for (int i = 1; i < pool->n_threads; i++)
    pool->threads[i] = g_thread_new ("owb-worker", worker, pool);
  return pool;
}

void
owb_thread_pool_free (OwbThreadPool *pool)
{
  if (!pool)
    return;
  g_mutex_lock (&pool->lock);
  pool->quit = TRUE;
  g_cond_broadcast (&pool->work_cond);
  g_mutex_unlock (&pool->lock);
  for (int i = 1; i < pool->n_threads; i++)
    g_thread_join (pool->threads[i]);
  g_free (pool->threads);
  g_mutex_clear (&pool->lock);
  g_mutex_clear (&pool->run_lock);
  g_cond_clear (&pool->work_cond);
  g_cond_clear (&pool->done_cond);
  g_free (pool);
}

int
owb_thread_pool_get_n_threads (const OwbThreadPool *pool)
{
  return pool ? pool->n_threads : 1;
}

void
owb_parallel_for (OwbThreadPool *pool, int64_t n, int64_t grain, OwbParallelFunc fn, gpointer data)
{
  if (n <= 0)
    return;
  grain = MAX (grain, 1);
  if (!pool || pool->n_threads == 1 || n <= grain || !g_mutex_trylock (&pool->run_lock))
    {
      /* Serial, also when another parallel_for holds the pool (nested or concurrent runs). */
      fn (0, n, data);
      return;
    }
  /* A few chunks per thread balance uneven work without much overhead. */
  int64_t max_chunks = (int64_t) pool->n_threads * 4;
  int64_t chunk = MAX (grain, (n + max_chunks - 1) / max_chunks);
  g_mutex_lock (&pool->lock);
  pool->fn = fn;
  pool->data = data;
  pool->n = n;
  pool->chunk = chunk;
  pool->n_chunks = (int) ((n + chunk - 1) / chunk);
  g_atomic_int_set (&pool->next_chunk, 0);
  pool->busy = pool->n_threads - 1;
  pool->generation++;
  g_cond_broadcast (&pool->work_cond);
  g_mutex_unlock (&pool->lock);
  run_chunks (pool);
  g_mutex_lock (&pool->lock);
  while (pool->busy > 0)
    g_cond_wait (&pool->done_cond, &pool->lock);
  g_mutex_unlock (&pool->lock);
  g_mutex_unlock (&pool->run_lock);
}
