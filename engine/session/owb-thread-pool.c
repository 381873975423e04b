/* owb-thread-pool.c: one intra-op pool per session; parallel_for splits a range over its threads.
 *
 * Workers spin for a short while after a job before they sleep, and the caller spins before it
 * waits for them: a network runs one parallel_for per node, often 100 us or less apart, and a
 * futex wake-up per node cost mobilenet_v3 about as much as its smaller kernels.
 *
 * Thread t first runs the t-th contiguous share of a range's chunks, then helps with the others'.
 * Kernels order their units by output rows, so consecutive nodes give each thread the same rows of
 * the image: what one node's thread wrote is in that core's cache when the next node reads it
 * (with chunks handed out first come first served, half the reads crossed cores). Helping keeps a
 * thread that starts late, or is preempted, from holding up the others.
 *
 * A worker joins a job before it takes a chunk, and the caller closes the job once every chunk is
 * taken: it then waits only for the workers that joined, never for one that has not started. A
 * job of a few microseconds (a recurrent model's step, a small MatMul after the workers fell
 * asleep) used to wait for every worker to wake up only to find nothing left; on a loaded machine
 * that wait was a scheduler slice (a 50-frame speech model's first MatMul: 24 ms a run at 2
 * threads, against 0.04 ms run by the caller alone). */
#ifdef __linux__
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#endif

#include <owb/owb-parallel.h>

#include "owb-trace-private.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause ()
#else
#define cpu_relax() do { } while (0)
#endif

/* How long a worker (or the caller) polls before it blocks. */
#define SPIN_US 200
/* At most one move of a worker off the caller's CPU this often (see spread_workers). */
#define SPREAD_INTERVAL_US 5000

/* One thread's share of the current job's chunks; a cache line each, so that taking a chunk of
 * one's own share does not contend with the others. */
typedef struct {
  gint next; /* atomic */
  int end;
  char pad[64 - 2 * sizeof (int)];
} Share;

typedef struct {
  OwbThreadPool *pool;
  int index;
#ifdef __linux__
  pthread_t self;
  gint cpu;           /* atomic: the CPU it took its last job on, -1 unknown */
  gint64 last_spread; /* the caller's, see spread_workers */
#endif
} WorkerStart;

struct _OwbThreadPool {
  int n_threads;
  GThread **threads;
  WorkerStart *starts;
  GMutex lock;        /* guards the job fields and generation */
  GCond work_cond;
  GCond done_cond;
  GMutex run_lock;    /* one parallel_for at a time (concurrent session runs share the pool) */
  guint64 generation; /* atomic; written under lock */
  gboolean quit;      /* atomic */
  gint sleepers;      /* atomic: workers blocked (or about to block) on work_cond */
  gint caller_waiting; /* atomic: the caller blocked (or about to) on done_cond */
  /* current job */
  OwbParallelFunc fn;
  gpointer data;
  int64_t n, chunk;
  Share *shares;      /* per thread; the caller is thread 0 */
  _OwbWorkerTrace *trace; /* per thread, where a traced node's job records its workers' spans; or NULL */
  guint64 state;      /* atomic: JOB_GEN (low 32 bits of generation), JOB_CLOSED, workers in the job */
};

#define JOB_CLOSED ((guint64) 1 << 31)
#define JOB_COUNT(s) ((s) & (JOB_CLOSED - 1))
#define JOB_GEN(g) ((guint64) (guint32) (g) << 32)

/* Polls until cond holds or SPIN_US pass; TRUE if it held. After the first few hundred polls it
 * yields between polls: when the machine is busy and another thread of ours waits for this core,
 * a bare spin would keep it from running for the whole slice. */
static gboolean
spin_until (gboolean (*cond) (OwbThreadPool *, guint64), OwbThreadPool *pool, guint64 arg)
{
  gint64 deadline = 0;
  for (guint i = 1;; i++)
    {
      if (cond (pool, arg))
        return TRUE;
      if (i < 256)
        {
          cpu_relax ();
          continue;
        }
      gint64 now = g_get_monotonic_time ();
      if (!deadline)
        deadline = now + SPIN_US;
      else if (now >= deadline)
        return FALSE;
      g_thread_yield ();
    }
}

static gboolean
new_work (OwbThreadPool *pool, guint64 seen)
{
  return __atomic_load_n (&pool->generation, __ATOMIC_ACQUIRE) != seen || g_atomic_int_get (&pool->quit);
}

static gboolean
all_done (OwbThreadPool *pool, guint64 unused)
{
  return JOB_COUNT (__atomic_load_n (&pool->state, __ATOMIC_ACQUIRE)) == 0;
}

/* Enters job `gen` unless the caller closed it (or a later one began); TRUE when it did. */
static gboolean
join_job (OwbThreadPool *pool, guint64 gen)
{
  guint64 s = __atomic_load_n (&pool->state, __ATOMIC_ACQUIRE);
  for (;;)
    {
      if ((s & ~(guint64) G_MAXUINT32) != JOB_GEN (gen) || (s & JOB_CLOSED))
        return FALSE;
      if (__atomic_compare_exchange_n (&pool->state, &s, s + 1, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return TRUE;
    }
}

/* Where the parallel loops this thread starts record their workers' spans (a traced run's node). */
static __thread _OwbWorkerTrace *thread_trace;

_OwbWorkerTrace *
_owb_thread_pool_swap_trace (_OwbWorkerTrace *spans)
{
  _OwbWorkerTrace *old = thread_trace;
  thread_trace = spans;
  return old;
}

/* Returns the number of chunks this thread ran. */
static int
run_chunks (OwbThreadPool *pool, int self)
{
  int ran = 0;
  for (int k = 0; k < pool->n_threads; k++)
    {
      Share *share = &pool->shares[(self + k) % pool->n_threads];
      for (;;)
        {
          int c = g_atomic_int_add (&share->next, 1);
          if (c >= share->end)
            break;
          int64_t begin = (int64_t) c * pool->chunk;
          int64_t end = MIN (begin + pool->chunk, pool->n);
          pool->fn (begin, end, pool->data);
          ran++;
        }
    }
  return ran;
}

static gpointer
worker (gpointer data)
{
  WorkerStart *start = data;
  OwbThreadPool *pool = start->pool;
  guint64 seen = 0;
#ifdef __linux__
  start->self = pthread_self ();
#endif
  for (;;)
    {
      if (!spin_until (new_work, pool, seen))
        {
          /* Announce the sleep before the last check: parallel_for bumps the generation, then
           * looks for sleepers (both sequentially consistent), so one of the two sees the other. */
          g_mutex_lock (&pool->lock);
          g_atomic_int_inc (&pool->sleepers);
          while (!new_work (pool, seen))
            g_cond_wait (&pool->work_cond, &pool->lock);
          g_atomic_int_dec_and_test (&pool->sleepers);
          g_mutex_unlock (&pool->lock);
        }
      if (g_atomic_int_get (&pool->quit))
        break;
      seen = __atomic_load_n (&pool->generation, __ATOMIC_ACQUIRE);
      if (!join_job (pool, seen))
        continue; /* the caller finished it alone */
#ifdef __linux__
      g_atomic_int_set (&start->cpu, sched_getcpu ());
#endif
      /* the job's fields are stable until this worker leaves it below */
      _OwbWorkerTrace *trace = pool->trace;
      gint64 t0 = trace ? _owb_now_ns () : 0;
      if (run_chunks (pool, start->index) > 0 && trace)
        {
          _OwbWorkerTrace *mine = &trace[start->index];
          gint64 t1 = _owb_now_ns ();
          if (!mine->start_ns)
            mine->start_ns = t0;
          mine->end_ns = t1;
          mine->busy_ns += t1 - t0;
        }
      guint64 left = __atomic_sub_fetch (&pool->state, 1, __ATOMIC_ACQ_REL);
      if (JOB_COUNT (left) == 0 && (left & JOB_CLOSED) && g_atomic_int_get (&pool->caller_waiting))
        {
          g_mutex_lock (&pool->lock);
          g_cond_signal (&pool->done_cond);
          g_mutex_unlock (&pool->lock);
        }
    }
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
  pool->starts = g_new0 (WorkerStart, pool->n_threads);
  pool->shares = g_new0 (Share, pool->n_threads);
  for (int i = 1; i < pool->n_threads; i++)
    {
      pool->starts[i] = (WorkerStart){ .pool = pool, .index = i };
#ifdef __linux__
      pool->starts[i].cpu = -1;
#endif
      pool->threads[i] = g_thread_new ("owb-worker", worker, &pool->starts[i]);
    }
  return pool;
}

void
owb_thread_pool_free (OwbThreadPool *pool)
{
  if (!pool)
    return;
  g_mutex_lock (&pool->lock);
  g_atomic_int_set (&pool->quit, TRUE);
  g_cond_broadcast (&pool->work_cond);
  g_mutex_unlock (&pool->lock);
  for (int i = 1; i < pool->n_threads; i++)
    g_thread_join (pool->threads[i]);
  g_free (pool->threads);
  g_free (pool->starts);
  g_free (pool->shares);
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

/* Moves a worker that took the last job on the caller's CPU to another one. A worker woken by the
 * caller tends to be placed on the caller's CPU, where the two take turns instead of running side
 * by side until the kernel's load balancing separates them: 60-75 ms after a process starts here,
 * in which mnasnet0_5 ran 5-7 ms per run at 2 threads instead of 2.5, slower than at 1 thread. The
 * worker's affinity is narrowed to the other CPUs it may use, which moves it at once, then put
 * back as it was. */
static void
spread_workers (OwbThreadPool *pool)
{
#ifdef __linux__
  int me = sched_getcpu ();
  if (me < 0)
    return;
  for (int i = 1; i < pool->n_threads; i++)
    {
      WorkerStart *w = &pool->starts[i];
      if (g_atomic_int_get (&w->cpu) != me)
        continue;
      gint64 now = g_get_monotonic_time ();
      if (w->last_spread && now - w->last_spread < SPREAD_INTERVAL_US)
        continue;
      w->last_spread = now;
      cpu_set_t mask, away;
      if (pthread_getaffinity_np (w->self, sizeof mask, &mask) != 0)
        continue;
      away = mask;
      CPU_CLR (me, &away);
      if (CPU_COUNT (&away) > 0 && pthread_setaffinity_np (w->self, sizeof away, &away) == 0)
        pthread_setaffinity_np (w->self, sizeof mask, &mask);
      g_atomic_int_set (&w->cpu, -1);
    }
#endif
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
  /* No worker is in a job (the last one closed with none left in it), so its fields are ours. */
  pool->fn = fn;
  pool->data = data;
  pool->n = n;
  pool->chunk = chunk;
  pool->trace = thread_trace;
  int n_chunks = (int) ((n + chunk - 1) / chunk);
  for (int t = 0; t < pool->n_threads; t++)
    {
      g_atomic_int_set (&pool->shares[t].next, (int) ((int64_t) n_chunks * t / pool->n_threads));
      pool->shares[t].end = (int) ((int64_t) n_chunks * (t + 1) / pool->n_threads);
    }
  guint64 gen = __atomic_load_n (&pool->generation, __ATOMIC_RELAXED) + 1;
  __atomic_store_n (&pool->state, JOB_GEN (gen), __ATOMIC_RELEASE);
  __atomic_store_n (&pool->generation, gen, __ATOMIC_SEQ_CST);
  if (g_atomic_int_get (&pool->sleepers) > 0)
    {
      g_mutex_lock (&pool->lock);
      g_cond_broadcast (&pool->work_cond);
      g_mutex_unlock (&pool->lock);
    }
  run_chunks (pool, 0);
  /* every chunk is taken: a worker that has not joined yet will not */
  guint64 closed = __atomic_or_fetch (&pool->state, JOB_CLOSED, __ATOMIC_ACQ_REL);
  if (JOB_COUNT (closed) > 0 && !spin_until (all_done, pool, 0))
    {
      g_mutex_lock (&pool->lock);
      g_atomic_int_set (&pool->caller_waiting, TRUE);
      while (!all_done (pool, 0))
        g_cond_wait (&pool->done_cond, &pool->lock);
      g_atomic_int_set (&pool->caller_waiting, FALSE);
      g_mutex_unlock (&pool->lock);
    }
  spread_workers (pool);
  g_mutex_unlock (&pool->run_lock);
}

void
owb_parallel_for_work (OwbThreadPool *pool, int64_t n, int64_t grain, int64_t work_ns, OwbParallelFunc fn,
                       gpointer data)
{
  if (n > 0 && work_ns < OWB_PARALLEL_INLINE_NS)
    {
      fn (0, n, data);
      return;
    }
  owb_parallel_for (pool, n, grain, fn, data);
}
