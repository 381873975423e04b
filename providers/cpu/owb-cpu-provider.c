/* owb-cpu-provider.c: the CPU execution provider: claims every node it has a kernel for, running
 * float16/bfloat16 through float32 kernels where no native one exists. */
#include <owb/owb-providers.h>
#include <owb/owb-error.h>

#include "cpu-kernels-private.h"

#include <cblas.h>

static const OwbKernelDef *const tables[] = {
  _owb_cpu_kernels_elementwise, _owb_cpu_kernels_nn, _owb_cpu_kernels_norm,
  _owb_cpu_kernels_tensor,      _owb_cpu_kernels_reduce, _owb_cpu_kernels_resize,
  _owb_cpu_kernels_rnn,         _owb_cpu_kernels_transformer, _owb_cpu_kernels_misc,
  _owb_cpu_kernels_quant,       _owb_cpu_kernels_signal, _owb_cpu_kernels_image_decoder,
  _owb_cpu_kernels_control,     _owb_cpu_kernels_ml, _owb_cpu_kernels_fused,
  _owb_cpu_kernels_fused_transformer, _owb_cpu_kernels_layout, _owb_cpu_kernels_layout_deconv,
};

static gboolean
is_half (const OwbValueType *t)
{
  return t && (t->dtype == OWB_TYPE_FLOAT16 || t->dtype == OWB_TYPE_BFLOAT16);
}

static gboolean
cpu_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
           const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  const OwbKernelDef *def = owb_kernel_table_lookup (tables, G_N_ELEMENTS (tables), node, opset, input_types,
                                                     output_types, reason);
  gboolean via32 = FALSE;
  if (!def)
    {
      /* Half types: retry as float32, converting around the kernel. */
      gboolean any_half = FALSE;
      for (int i = 0; i < node->n_inputs; i++)
        any_half |= is_half (input_types[i]);
      for (int o = 0; o < node->n_outputs; o++)
        any_half |= is_half (&output_types[o]);
      if (any_half)
        {
          const OwbValueType **in32 = g_new0 (const OwbValueType *, MAX (node->n_inputs, 1));
          OwbValueType *copies = g_new (OwbValueType, MAX (node->n_inputs, 1));
          OwbValueType *out32 = g_new (OwbValueType, MAX (node->n_outputs, 1));
          for (int i = 0; i < node->n_inputs; i++)
            {
              in32[i] = input_types[i];
              if (is_half (input_types[i]))
                {
                  copies[i] = *input_types[i];
                  copies[i].dtype = OWB_TYPE_FLOAT;
                  in32[i] = &copies[i];
                }
            }
          for (int o = 0; o < node->n_outputs; o++)
            {
              out32[o] = output_types[o];
              if (is_half (&out32[o]))
                out32[o].dtype = OWB_TYPE_FLOAT;
            }
          def = owb_kernel_table_lookup (tables, G_N_ELEMENTS (tables), node, opset, in32, out32, NULL);
          if (def)
            {
              via32 = TRUE;
              g_clear_pointer (reason, g_free);
            }
          g_free (in32);
          g_free (copies);
          g_free (out32);
        }
      if (!def)
        return FALSE;
    }
  void *state = NULL;
  if (def->prepare && !def->prepare (node, opset, input_types, &state, error))
    return FALSE;
  choice->def = def;
  choice->state = state;
  choice->via_float32 = via32;
  return TRUE;
}

static void
cpu_free (OwbProvider *provider)
{
  g_free (provider);
}

/* OpenBLAS's own: ends the threads it started when it was loaded. Weak, so that a BLAS without it
 * still links. */
extern void blas_thread_shutdown_ (void) __attribute__ ((weak));

/* The session's pool is the one source of intra-op threads: kernels split GEMMs and other work
 * over it, so OpenBLAS must not run threads of its own (two pools on the same cores fight, and
 * small per-step GEMMs spend their time waking OpenBLAS's threads). Its threads, started when the
 * library loaded, are ended too: they spun on the other core for the process's first ~100 ms,
 * beside the pool's worker during the first runs and interrupted by the load's page unmapping.
 * With one thread set OpenBLAS never uses them again (it would start them anew if asked for more).
 * This is process-wide state, set once. */
static void
single_threaded_blas (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      openblas_set_num_threads (1);
      if (blas_thread_shutdown_)
        blas_thread_shutdown_ ();
      g_once_init_leave (&once, 1);
    }
}

OwbProvider *
owb_cpu_provider_new (void)
{
  single_threaded_blas ();
  OwbProvider *p = g_new0 (OwbProvider, 1);
  p->name = "cpu";
  p->description = "host CPU";
  p->claim = cpu_claim;
  p->release = owb_kernel_choice_release;
  p->free = cpu_free;
  return p;
}
