/* qgemm-bench.c: the integer GEMM's speed against this CPU's vpdpbusd peak.
 * `qgemm-bench peak [THREADS]`: vpdpbusd zmm throughput (instructions per ns, per thread and in
 * all), from independent accumulator chains; `qgemm-bench gemm M N K THREADS [ITER]`: the packed
 * GEMM's median time and GOP/s (2 M N K per call) through AMX, VNNI, AVX2 and the portable microkernel;
 * `qgemm-bench models A.onnx B.onnx THREADS [ROUNDS]`: the median latency of two models (a before
 * and an after) run alternately, A B A B, on the same random inputs. */
#include <owb/owb.h>
#include "../providers/cpu/cpu-qgemm-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_VNNI 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#ifdef HAVE_VNNI
#define CHAINS 16
/* Runs `iters` x CHAINS vpdpbusd on independent accumulators (zmm16-31), in assembly so that
 * the compiler neither drops nor serialises them. */
static __attribute__ ((target ("avx512f,avx512bw,avx512vnni"), noinline)) int
dpbusd_loop (int64_t iters)
{
  for (int64_t it = 0; it < iters; it++)
    __asm__ volatile (
#define D(n) "vpdpbusd %%zmm1, %%zmm0, %%zmm" #n "\n\t"
      D (16) D (17) D (18) D (19) D (20) D (21) D (22) D (23) D (24) D (25) D (26) D (27) D (28) D (29) D (30) D (31)
#undef D
      ::: "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",
      "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
  return (int) iters;
}

/* The core clock: a chain of dependent adds retires one a cycle (the best of 10 tries, as other
 * work on the machine only slows it). */
static __attribute__ ((noinline)) double
clock_ghz (void)
{
  double best = 0;
  for (int t = 0; t < 10; t++)
    {
      int64_t n = 50 * 1000 * 1000, x = 0;
      int64_t t0 = g_get_monotonic_time ();
      for (int64_t i = 0; i < n; i++)
        __asm__ volatile ("add $1, %0" : "+r"(x));
      best = MAX (best, n / ((g_get_monotonic_time () - t0) * 1e3));
    }
  return best;
}

typedef struct {
  int64_t iters;
  double ns, ghz;
  int sink;
} PeakJob;

static gpointer
peak_thread (gpointer data)
{
  PeakJob *j = data;
  dpbusd_loop (j->iters); /* warm up (frequency licence) */
  /* the best of many short runs: on a shared machine a long one measures the other load too
   * (one 0.3 s run read 307 GOP/s where the GEMM itself reached 416) */
  j->ns = G_MAXDOUBLE;
  for (int rep = 0; rep < 40; rep++)
    {
      int64_t t0 = g_get_monotonic_time ();
      j->sink += dpbusd_loop (j->iters);
      j->ns = MIN (j->ns, (g_get_monotonic_time () - t0) * 1e3);
    }
  j->ghz = clock_ghz ();
  return NULL;
}
#endif

static int
bench_peak (int threads)
{
#ifdef HAVE_VNNI
  if (!_owb_qgemm_uses_vnni ())
    {
      fprintf (stderr, "no AVX-512 VNNI\n");
      return 1;
    }
  PeakJob jobs[64];
  GThread *th[64];
  threads = CLAMP (threads, 1, 64);
  for (int t = 0; t < threads; t++)
    {
      jobs[t] = (PeakJob){ .iters = 1000 * 1000 };
      th[t] = g_thread_new ("peak", peak_thread, &jobs[t]);
    }
  double total = 0;
  for (int t = 0; t < threads; t++)
    {
      g_thread_join (th[t]);
      double per_ns = jobs[t].iters * (double) CHAINS / jobs[t].ns;
      printf ("thread %d: %.3f vpdpbusd/ns = %.1f GOP/s (64 MACs, 2 ops each); clock %.2f GHz (dependent adds), "
              "%.2f vpdpbusd/cycle\n", t, per_ns, per_ns * 128, jobs[t].ghz, per_ns / jobs[t].ghz);
      total += per_ns;
    }
  printf ("peak: %.3f vpdpbusd/ns over %d threads = %.1f GOP/s\n", total, threads, total * 128);
  return 0;
#else
  fprintf (stderr, "not x86-64\n");
  return 1;
#endif
}

static int
bench_gemm (int64_t M, int64_t N, int64_t K, int threads, int iters)
{
  GRand *r = g_rand_new_with_seed (7);
  uint8_t *a = g_new (uint8_t, M * K);
  int8_t *b = g_new (int8_t, K * N);
  for (int64_t i = 0; i < M * K; i++)
    a[i] = (uint8_t) g_rand_int_range (r, 0, 256);
  /* OWB_QGEMM_BENCH_B7=1: weights of 7 bits (reduce_range), which the AVX2 path multiplies unwidened */
  gboolean b7 = g_getenv ("OWB_QGEMM_BENCH_B7") != NULL;
  for (int64_t i = 0; i < K * N; i++)
    b[i] = (int8_t) (b7 ? g_rand_int_range (r, -64, 64) : g_rand_int_range (r, -128, 128));
  int32_t *c = g_new (int32_t, M * N);
  OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, NULL, 0);
  OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_INT32 };
  /* OWB_QGEMM_BENCH_U8=1: requantized uint8 output, as a QDQ convolution's (per-column scales,
   * no bias: the narrow epilogue where K 255^2 < 2^24) */
  float *scale = g_new (float, N);
  for (int64_t n = 0; n < N; n++)
    scale[n] = (float) (g_rand_double_range (r, 0.3, 3.0) / (sqrt ((double) K) * 128 * 74 / 40));
  if (g_getenv ("OWB_QGEMM_BENCH_U8"))
    ep = (OwbQgemmEpilogue) { .output = OWB_QGEMM_OUT_UINT8, .scale = scale, .y_zero_point = 128 };
  OwbThreadPool *pool = threads > 1 ? owb_thread_pool_new (threads) : NULL;
  double *t = g_new (double, iters), *tc = g_new (double, iters);
  static const char *const path_names[] = { "amx     ", "vnni    ", "avx2    ", "portable" };
  for (int path = 0; path < 4; path++)
    {
      _owb_qgemm_force_portable (path == 3);
      _owb_qgemm_force_avx2 (path == 2);
      _owb_qgemm_force_no_amx (path != 0);
      if ((path == 0 && !_owb_qgemm_uses_amx ()) || (path == 1 && !_owb_qgemm_uses_vnni ())
          || (path == 2 && !_owb_qgemm_uses_avx2 ()))
        continue;
      int n = path < 3 ? iters : MAX (iters / 20, 3);
      for (int w = 0; w < 3; w++)
        _owb_qgemm_packed (pool, p, M, a, K, 128, c, N, &ep);
      for (int i = 0; i < n; i++)
        {
          struct timespec c0, c1;
          clock_gettime (CLOCK_THREAD_CPUTIME_ID, &c0);
          int64_t t0 = g_get_monotonic_time ();
          _owb_qgemm_packed (pool, p, M, a, K, 128, c, N, &ep);
          t[i] = (g_get_monotonic_time () - t0) / 1e3;
          clock_gettime (CLOCK_THREAD_CPUTIME_ID, &c1);
          tc[i] = (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6;
        }
      double ms = median (t, n);
      printf ("%s M=%" G_GINT64_FORMAT " N=%" G_GINT64_FORMAT " K=%" G_GINT64_FORMAT " threads=%d: %.3f ms, %.1f GOP/s",
              path_names[path], M, N, K, threads, ms, 2.0 * M * N * K / (ms * 1e6));
      /* on one thread, the calling thread's CPU time too: on a shared machine the wall clock of a
       * call longer than a time slice also counts the other processes that ran meanwhile */
      if (threads <= 1)
        {
          double cpu = median (tc, n);
          printf (" (CPU time %.3f ms: %.1f GOP/s)", cpu, 2.0 * M * N * K / (cpu * 1e6));
        }
      printf ("\n");
    }
  _owb_qgemm_force_portable (FALSE);
  _owb_qgemm_force_avx2 (FALSE);
  _owb_qgemm_force_no_amx (FALSE);
  if (pool)
    owb_thread_pool_free (pool);
  _owb_qgemm_packed_free (p);
  g_free (a);
  g_free (b);
  g_free (c);
  g_free (scale);
  g_free (t);
  g_free (tc);
  g_rand_free (r);
  return 0;
}

typedef struct {
  OwbSession *session;
  guint n;
  const char **names;
  OwbTensor **feeds;
} Loaded;

static gboolean
load (const char *path, int threads, Loaded *l)
{
  GError *error = NULL;
  OwbModel *model = owb_model_load_file (path, &error);
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.n_threads = threads;
  opts.optimize = OWB_OPTIMIZE_ALL;
  l->session = model ? owb_session_new_take (model, &opts, &error) : NULL;
  g_ptr_array_unref (opts.providers);
  if (!l->session)
    {
      fprintf (stderr, "%s: %s\n", path, error->message);
      g_error_free (error);
      return FALSE;
    }
  GRand *r = g_rand_new_with_seed (3);
  l->n = owb_session_get_n_inputs (l->session);
  l->names = g_new (const char *, MAX (l->n, 1));
  l->feeds = g_new (OwbTensor *, MAX (l->n, 1));
  for (guint i = 0; i < l->n; i++)
    {
      const OwbValueInfo *vi = owb_session_get_input (l->session, i);
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < vi->type.rank; d++)
        dims[d] = owb_dim_is_known (vi->type.dims[d]) ? vi->type.dims[d].value : 1;
      l->names[i] = vi->name;
      l->feeds[i] = owb_tensor_new_random (vi->type.dtype, vi->type.rank, dims, r, NULL);
      /* 8-bit data over its whole range */
      if (vi->type.dtype == OWB_TYPE_UINT8 || vi->type.dtype == OWB_TYPE_INT8)
        for (int64_t e = 0; e < l->feeds[i]->nelems; e++)
          ((uint8_t *) l->feeds[i]->data)[e] = (uint8_t) g_rand_int_range (r, 0, 256);
    }
  g_rand_free (r);
  return TRUE;
}

static double
run_once (Loaded *l)
{
  GError *error = NULL;
  guint no = owb_session_get_n_outputs (l->session);
  OwbTensor **outs = g_new0 (OwbTensor *, MAX (no, 1));
  gint64 t0 = owb_monotonic_ns ();
  if (!owb_session_run (l->session, l->n, l->names, l->feeds, no, NULL, outs, NULL, NULL, &error))
    g_error ("run: %s", error->message);
  double ms = (owb_monotonic_ns () - t0) / 1e6;
  for (guint i = 0; i < no; i++)
    owb_tensor_unref (outs[i]);
  g_free (outs);
  return ms;
}

static int
bench_models (const char *pa, const char *pb, int threads, int rounds)
{
  Loaded l[2];
  if (!load (pa, threads, &l[0]) || !load (pb, threads, &l[1]))
    return 1;
  double *t[2] = { g_new (double, rounds), g_new (double, rounds) };
  for (int w = 0; w < 5; w++)
    for (int m = 0; m < 2; m++)
      run_once (&l[m]);
  for (int i = 0; i < rounds; i++)
    for (int m = 0; m < 2; m++)
      t[m][i] = run_once (&l[m]);
  double ma = median (t[0], rounds), mb = median (t[1], rounds);
  printf ("threads=%d  %s: %.3f ms  %s: %.3f ms  ratio %.2fx\n", threads, pa, ma, pb, mb, ma / mb);
  for (int m = 0; m < 2; m++)
    {
      for (guint i = 0; i < l[m].n; i++)
        owb_tensor_unref (l[m].feeds[i]);
      g_free (l[m].feeds);
      g_free (l[m].names);
      owb_session_free (l[m].session);
      g_free (t[m]);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "peak") == 0)
    return bench_peak (argc > 2 ? atoi (argv[2]) : 1);
  if (argc >= 6 && strcmp (argv[1], "gemm") == 0)
    return bench_gemm (atoll (argv[2]), atoll (argv[3]), atoll (argv[4]), atoi (argv[5]),
                       argc > 6 ? atoi (argv[6]) : 50);
  if (argc >= 5 && strcmp (argv[1], "models") == 0)
    return bench_models (argv[2], argv[3], atoi (argv[4]), argc > 5 ? atoi (argv[5]) : 20);
  fprintf (stderr, "usage: %s peak [THREADS] | gemm M N K THREADS [ITER] | models A.onnx B.onnx THREADS [ROUNDS]\n",
           argv[0]);
  return 2;
}
