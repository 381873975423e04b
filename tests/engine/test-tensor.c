#ifdef __linux__
#define _GNU_SOURCE
#include <sched.h>
#endif
/* test-tensor.c: tensor storage, views, element access, half conversions, shape overflow. */
#include <owb/owb.h>
#include <owb/owb-parallel.h>
#include <math.h>

static void
test_new_and_views (void)
{
  int64_t dims[] = { 2, 3 };
  g_autoptr (OwbTensor) t = owb_tensor_new (OWB_TYPE_FLOAT, 2, dims, NULL);
  g_assert_nonnull (t);
  g_assert_cmpint (t->nelems, ==, 6);
  g_assert_cmpuint (t->nbytes, ==, 24);
  for (int i = 0; i < 6; i++)
    owb_tensor_set_double (t, i, i * 1.5);
  int64_t vdims[] = { 6 };
  g_autoptr (OwbTensor) v = owb_tensor_new_view (t, 1, vdims, NULL);
  g_assert_true (v->data == t->data);
  g_assert_cmpfloat (owb_tensor_get_double (v, 5), ==, 7.5);
  g_autoptr (OwbTensor) d = owb_tensor_dup (t);
  g_assert_true (d->data != t->data);
  g_assert_cmpfloat (owb_tensor_get_double (d, 4), ==, 6.0);
  int64_t bad[] = { 7 };
  GError *error = NULL;
  g_assert_null (owb_tensor_new_view (t, 1, bad, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_error_free (error);
}

static void
test_overflow_and_negative (void)
{
  GError *error = NULL;
  int64_t huge[] = { G_GINT64_CONSTANT (1) << 40, G_GINT64_CONSTANT (1) << 40 };
  g_assert_null (owb_tensor_new (OWB_TYPE_FLOAT, 2, huge, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);
  int64_t neg[] = { 3, -1 };
  g_assert_null (owb_tensor_new (OWB_TYPE_FLOAT, 2, neg, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);
  /* Countable but impossible to allocate: an error, not an abort. */
  int64_t big[] = { G_GINT64_CONSTANT (1) << 50 };
  g_assert_null (owb_tensor_new (OWB_TYPE_DOUBLE, 1, big, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  int64_t zero[] = { 0, G_MAXINT64 };
  g_autoptr (OwbTensor) z = owb_tensor_new (OWB_TYPE_FLOAT, 2, zero, &error);
  g_assert_no_error (error);
  g_assert_cmpint (z->nelems, ==, 0);
}

static void
test_half (void)
{
  float values[] = { 0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f, 1e-9f };
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      float back = owb_half_to_float (owb_float_to_half (values[i]));
      g_assert_cmpfloat_with_epsilon (back, values[i], fabsf (values[i]) * 1e-3f + 6e-8f);
    }
  g_assert_cmphex (owb_float_to_half (1.0f), ==, 0x3c00);
  g_assert_cmphex (owb_float_to_half (-2.0f), ==, 0xc000);
  g_assert_cmphex (owb_float_to_half (1e6f), ==, 0x7c00);
  g_assert_cmphex (owb_float_to_half (5.9604645e-08f), ==, 0x0001);
  g_assert_true (isnan (owb_half_to_float (owb_float_to_half (NAN))));
  g_assert_cmphex (owb_float_to_bfloat16 (1.0f), ==, 0x3f80);
  g_assert_cmpfloat (owb_bfloat16_to_float (0x4049), ==, 3.140625f);
}

static void
test_cast (void)
{
  int64_t dims[] = { 4 };
  g_autoptr (OwbTensor) t = owb_tensor_new (OWB_TYPE_FLOAT, 1, dims, NULL);
  float *f = t->data;
  f[0] = 1.5f;
  f[1] = -2.7f;
  f[2] = 0.0f;
  f[3] = 300.0f;
  g_autoptr (OwbTensor) i = owb_tensor_cast (t, OWB_TYPE_INT32, NULL);
  g_assert_cmpint (((int32_t *) i->data)[1], ==, -2);
  g_autoptr (OwbTensor) b = owb_tensor_cast (t, OWB_TYPE_BOOL, NULL);
  g_assert_cmpint (((uint8_t *) b->data)[2], ==, 0);
  g_assert_cmpint (((uint8_t *) b->data)[3], ==, 1);
  g_autoptr (OwbTensor) h = owb_tensor_cast (t, OWB_TYPE_FLOAT16, NULL);
  g_assert_cmpfloat (owb_tensor_get_double (h, 0), ==, 1.5);
  int64_t big = G_GINT64_CONSTANT (9007199254740993);
  g_autoptr (OwbTensor) l = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 1 }, NULL);
  ((int64_t *) l->data)[0] = big;
  g_autoptr (OwbTensor) u = owb_tensor_cast (l, OWB_TYPE_UINT64, NULL);
  g_assert_cmpuint (((uint64_t *) u->data)[0], ==, (uint64_t) big); /* no double rounding */
}

static void
test_value_type_string (void)
{
  OwbValueType t;
  owb_value_type_init_unknown (&t);
  t.dtype = OWB_TYPE_FLOAT;
  t.rank = 3;
  t.dims[0] = (OwbDim){ -1, g_intern_string ("batch") };
  t.dims[1] = OWB_DIM_VALUE (3);
  t.dims[2] = OWB_DIM_UNKNOWN;
  g_autofree char *s = owb_value_type_to_string (&t);
  g_assert_cmpstr (s, ==, "float32[batch,3,?]");
  g_assert_false (owb_value_type_is_fully_known (&t));
}

static void
test_thread_pool_sum_chunk (int64_t begin, int64_t end, gpointer data)
{
  gint64 *counts = data;
  for (int64_t i = begin; i < end; i++)
    counts[i]++;
}

static void
test_thread_pool (void)
{
  OwbThreadPool *pool = owb_thread_pool_new (3);
  gint64 *counts = g_new0 (gint64, 10000);
  for (int rep = 0; rep < 50; rep++)
    owb_parallel_for (pool, 10000, 16, test_thread_pool_sum_chunk, counts);
  for (int i = 0; i < 10000; i++)
    g_assert_cmpint (counts[i], ==, 50);
  g_free (counts);
  owb_thread_pool_free (pool);
}

/* Every index once, whatever the range's size against the thread count. */
static void
test_thread_pool_sizes (void)
{
  for (int threads = 2; threads <= 4; threads++)
    {
      OwbThreadPool *pool = owb_thread_pool_new (threads);
      for (int64_t n = 1; n <= 41; n++)
        for (int64_t grain = 1; grain <= 3; grain++)
          {
            gint64 counts[41] = { 0 };
            owb_parallel_for (pool, n, grain, test_thread_pool_sum_chunk, counts);
            for (int64_t i = 0; i < 41; i++)
              g_assert_cmpint (counts[i], ==, i < n ? 1 : 0);
          }
      owb_thread_pool_free (pool);
    }
}

typedef struct {
  GThread *caller;
  gint stalled;      /* atomic */
  gint by_caller[8]; /* per chunk: 1 when the caller ran it */
} Helping;

/* A worker stalls on its first chunk; the caller runs its own share, then the rest of the worker's. */
static void
helping_chunk (int64_t begin, int64_t end, gpointer data)
{
  Helping *h = data;
  if (g_thread_self () != h->caller)
    {
      if (g_atomic_int_compare_and_exchange (&h->stalled, 0, 1))
        g_usleep (50000);
      return;
    }
  for (int64_t i = begin; i < end; i++)
    h->by_caller[i] = 1;
}

static void
test_thread_pool_helps (void)
{
  OwbThreadPool *pool = owb_thread_pool_new (2);
  Helping h = { .caller = g_thread_self () };
  /* 8 chunks of one: the caller's share is 0-3, the worker's 4-7 */
  owb_parallel_for (pool, 8, 1, helping_chunk, &h);
  int outside = 0;
  for (int i = 4; i < 8; i++)
    outside += h.by_caller[i];
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (h.by_caller[i], ==, 1);
  g_assert_cmpint (outside, >=, 3);
  owb_thread_pool_free (pool);
}

/* Which threads ran a loop's items. Item 0 (the caller's share) waits a while for another thread to
 * run an item, so that a loop offered to the pool is seen to reach a worker. */
typedef struct {
  GThread *caller;
  gint by_worker; /* atomic */
  gint64 wait_us;
} WhoRan;

static void
who_ran_chunk (int64_t begin, int64_t end, gpointer data)
{
  WhoRan *w = data;
  for (int64_t i = begin; i < end; i++)
    {
      if (g_thread_self () != w->caller)
        g_atomic_int_inc (&w->by_worker);
      else if (i == 0)
        {
          gint64 until = g_get_monotonic_time () + w->wait_us;
          while (!g_atomic_int_get (&w->by_worker) && g_get_monotonic_time () < until)
            g_usleep (100);
        }
    }
}

/* Work estimated under OWB_PARALLEL_INLINE_NS runs on the calling thread (no worker is woken for
 * it); more goes to the pool as owb_parallel_for does. */
static void
test_thread_pool_inline_small_work (void)
{
  OwbThreadPool *pool = owb_thread_pool_new (2);
  WhoRan tiny = { .caller = g_thread_self (), .wait_us = 100000 };
  owb_parallel_for_work (pool, 8, 1, OWB_PARALLEL_INLINE_NS / 2, who_ran_chunk, &tiny);
  g_assert_cmpint (g_atomic_int_get (&tiny.by_worker), ==, 0);
  WhoRan big = { .caller = g_thread_self (), .wait_us = 10 * G_USEC_PER_SEC };
  owb_parallel_for_work (pool, 8, 1, 1000 * 1000 * 1000, who_ran_chunk, &big);
  g_assert_cmpint (g_atomic_int_get (&big.by_worker), >, 0);
  owb_thread_pool_free (pool);
}

#ifdef __linux__
typedef struct {
  GThread *caller;
  int cpu;          /* the caller's */
  gint counts[64];  /* atomic */
} Spreading;

/* The worker puts itself on the caller's CPU, as the kernel tends to do with a woken worker. */
static void
spreading_chunk (int64_t begin, int64_t end, gpointer data)
{
  Spreading *sp = data;
  if (g_thread_self () != sp->caller)
    {
      cpu_set_t all, one;
      sched_getaffinity (0, sizeof all, &all);
      CPU_ZERO (&one);
      CPU_SET (sp->cpu, &one);
      sched_setaffinity (0, sizeof one, &one);
      sched_setaffinity (0, sizeof all, &all);
    }
  for (int64_t i = begin; i < end; i++)
    g_atomic_int_inc (&sp->counts[i]);
}

/* A worker found on the caller's CPU after a job is moved off it (owb-thread-pool.c,
 * spread_workers); jobs still run every index once while that happens. Whether the kernel keeps
 * the worker where it was moved depends on the machine's load, so that is measured by bench/, not
 * asserted here. */
static void
test_thread_pool_spreads (void)
{
  cpu_set_t all;
  if (sched_getaffinity (0, sizeof all, &all) != 0 || CPU_COUNT (&all) < 2)
    {
      g_test_skip ("needs two CPUs");
      return;
    }
  int cpu = 0;
  while (!CPU_ISSET (cpu, &all))
    cpu++;
  OwbThreadPool *pool = owb_thread_pool_new (3);
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
  Spreading sp = { .caller = g_thread_self (), .cpu = cpu };
  for (int i = 0; i < 50; i++)
    {
      owb_parallel_for (pool, 64, 1, spreading_chunk, &sp);
      if (i % 10 == 9)
        g_usleep (6000); /* past the pool's interval between two moves of a worker */
    }
  sched_setaffinity (0, sizeof all, &all);
  owb_thread_pool_free (pool);
  for (int i = 0; i < 64; i++)
    g_assert_cmpint (sp.counts[i], ==, 50);
}

typedef struct {
  int cpu;
  gint stop; /* atomic */
} Hog;

static gpointer
hog_thread (gpointer data)
{
  Hog *hog = data;
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (hog->cpu, &one);
  sched_setaffinity (0, sizeof one, &one);
  volatile guint64 spin = 0;
  while (!g_atomic_int_get (&hog->stop))
    spin++;
  return NULL;
}

static void
tiny_chunk (int64_t begin, int64_t end, gpointer data)
{
  gint *count = data;
  g_atomic_int_add (count, (int) (end - begin));
}

/* Jobs of a few nanoseconds while the worker's CPU is taken by another busy thread: the caller runs
 * them alone and returns, without waiting for the worker to be scheduled only to find nothing left
 * (that wait was a scheduler slice, milliseconds, per job: a recurrent model's steps). */
static void
test_thread_pool_no_wait_for_late_workers (void)
{
  cpu_set_t all;
  if (sched_getaffinity (0, sizeof all, &all) != 0 || CPU_COUNT (&all) < 2)
    {
      g_test_skip ("needs two CPUs");
      return;
    }
  int cpus[2], k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
    if (CPU_ISSET (c, &all))
      cpus[k++] = c;
  /* the worker is made on (and inherits) the hog's CPU; the caller runs on the other */
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (cpus[1], &one);
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
  OwbThreadPool *pool = owb_thread_pool_new (2);
  Hog hog = { .cpu = cpus[1] };
  GThread *hog_t = g_thread_new ("hog", hog_thread, &hog);
  CPU_ZERO (&one);
  CPU_SET (cpus[0], &one);
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
  gint count = 0;
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < 200; i++)
    {
      owb_parallel_for (pool, 2, 1, tiny_chunk, &count);
      g_usleep (300); /* past the worker's spin: it sleeps, as between a model's runs */
    }
  gint64 us = g_get_monotonic_time () - t0;
  g_atomic_int_set (&hog.stop, 1);
  g_thread_join (hog_t);
  sched_setaffinity (0, sizeof all, &all);
  owb_thread_pool_free (pool);
  g_assert_cmpint (count, ==, 400);
  /* 200 sleeps of 300 us are 60 ms; waiting for the worker each time took 200 slices of the hog's
   * CPU (0.6 s and more) */
  g_test_message ("200 jobs with their sleeps: %.1f ms", us / 1000.0);
  g_assert_cmpint (us, <, 400000);
}
#endif

/* The one random generator: floats in [-1, 1) with both signs, integers in [0, 10), bools 0/1,
 * the same values for the same seed, and a clear error for types it has no values for. */
static void
test_random (void)
{
  int64_t dims[] = { 4, 250 };
  GRand *r1 = g_rand_new_with_seed (42), *r2 = g_rand_new_with_seed (42);
  g_autoptr (OwbTensor) a = owb_tensor_new_random (OWB_TYPE_FLOAT, 2, dims, r1, NULL);
  g_autoptr (OwbTensor) b = owb_tensor_new_random (OWB_TYPE_FLOAT, 2, dims, r2, NULL);
  g_assert_cmpmem (a->data, a->nbytes, b->data, b->nbytes);
  gboolean negative = FALSE, positive = FALSE;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      float v = ((float *) a->data)[i];
      g_assert_cmpfloat (v, >=, -1.0f);
      g_assert_cmpfloat (v, <, 1.0f);
      negative |= v < 0, positive |= v > 0;
    }
  g_assert_true (negative && positive);
  g_autoptr (OwbTensor) ints = owb_tensor_new_random (OWB_TYPE_INT64, 2, dims, r1, NULL);
  g_autoptr (OwbTensor) bools = owb_tensor_new_random (OWB_TYPE_BOOL, 2, dims, r1, NULL);
  for (int64_t i = 0; i < ints->nelems; i++)
    {
      g_assert_cmpint (((int64_t *) ints->data)[i], >=, 0);
      g_assert_cmpint (((int64_t *) ints->data)[i], <, 10);
      g_assert_cmpint (((guint8 *) bools->data)[i], <=, 1);
    }
  g_autoptr (GError) error = NULL;
  g_assert_null (owb_tensor_new_random (OWB_TYPE_COMPLEX64, 2, dims, r1, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_rand_free (r1);
  g_rand_free (r2);
}

/* Doubles out of an integer type's range are stored without undefined behaviour: truncated and
 * saturated to int64 (NaN 0), uint64 keeping [2^63, 2^64); x86 made 1e30 INT64_MIN before. */
static void
test_set_double_out_of_range (void)
{
  g_autoptr (OwbTensor) i64 = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, NULL);
  owb_tensor_set_double (i64, 0, 1e30);
  owb_tensor_set_double (i64, 1, -1e30);
  owb_tensor_set_double (i64, 2, NAN);
  owb_tensor_set_double (i64, 3, -2.7);
  const int64_t *v = i64->data;
  g_assert_cmpint (v[0], ==, G_MAXINT64);
  g_assert_cmpint (v[1], ==, G_MININT64);
  g_assert_cmpint (v[2], ==, 0);
  g_assert_cmpint (v[3], ==, -2);
  g_autoptr (OwbTensor) u64 = owb_tensor_new (OWB_TYPE_UINT64, 1, (int64_t[]){ 4 }, NULL);
  owb_tensor_set_double (u64, 0, -1);
  owb_tensor_set_double (u64, 1, 1e19);
  owb_tensor_set_double (u64, 2, 1e30);
  owb_tensor_set_double (u64, 3, NAN);
  const uint64_t *u = u64->data;
  g_assert_cmpuint (u[0], ==, G_MAXUINT64);
  g_assert_cmpuint (u[1], ==, G_GUINT64_CONSTANT (10000000000000000000));
  g_assert_cmpuint (u[2], ==, G_MAXUINT64);
  g_assert_cmpuint (u[3], ==, 0);
  g_autoptr (OwbTensor) i32 = owb_tensor_new (OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, NULL);
  owb_tensor_set_double (i32, 0, NAN);
  owb_tensor_set_double (i32, 1, 70000.9);
  g_assert_cmpint (((int32_t *) i32->data)[0], ==, 0);
  g_assert_cmpint (((int32_t *) i32->data)[1], ==, 70000);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor/new-and-views", test_new_and_views);
  g_test_add_func ("/tensor/overflow-and-negative", test_overflow_and_negative);
  g_test_add_func ("/tensor/half", test_half);
  g_test_add_func ("/tensor/cast", test_cast);
  g_test_add_func ("/tensor/value-type-string", test_value_type_string);
  g_test_add_func ("/tensor/thread-pool", test_thread_pool);
  g_test_add_func ("/tensor/thread-pool-sizes", test_thread_pool_sizes);
  g_test_add_func ("/tensor/thread-pool-helps", test_thread_pool_helps);
#ifdef __linux__
  g_test_add_func ("/tensor/thread-pool-spreads", test_thread_pool_spreads);
  g_test_add_func ("/tensor/thread-pool-no-wait-for-late-workers", test_thread_pool_no_wait_for_late_workers);
  g_test_add_func ("/tensor/thread-pool-inline-small-work", test_thread_pool_inline_small_work);
  g_test_add_func ("/tensor/random", test_random);
  g_test_add_func ("/tensor/set-double-out-of-range", test_set_double_out_of_range);
#endif
  return g_test_run ();
}
