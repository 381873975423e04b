/* owb-testdev.c: see owb-testdev.h. */
#include "owb-testdev.h"

#include <owb/owb-error.h>
#include <owb/owb-providers.h>

#include <string.h>

static OwbTestdevStats stats;

#define POISON 0xff /* float NaN, integer -1: a read after free shows */

typedef struct {
  gsize size;
  guint64 magic;
} Header;

#define MAGIC G_GUINT64_CONSTANT (0x7465737464657621)

/* Buffers carry a header before the data so that free and copies can check they are given this
 * device's pointers. */
static Header *
header_of (const void *ptr)
{
  return (Header *) ((char *) ptr - 64);
}

static void *
dev_alloc (OwbDevice *device, gsize size, GError **error)
{
  char *raw = size <= G_MAXSIZE - 64 ? g_try_malloc (size + 64) : NULL;
  if (!raw)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "testdev: cannot allocate %" G_GSIZE_FORMAT " bytes", size);
      return NULL;
    }
  Header *h = (Header *) raw;
  h->size = size;
  h->magic = MAGIC;
  memset (raw + 64, POISON, size);
  __atomic_add_fetch (&stats.allocs, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch (&stats.live_bytes, (gint64) size, __ATOMIC_RELAXED);
  return raw + 64;
}

static void
dev_free (OwbDevice *device, void *ptr, gsize size)
{
  Header *h = header_of (ptr);
  g_assert (h->magic == MAGIC);
  g_assert (h->size == size);
  h->magic = 0;
  memset (ptr, POISON, size);
  __atomic_add_fetch (&stats.frees, 1, __ATOMIC_RELAXED);
  __atomic_sub_fetch (&stats.live_bytes, (gint64) size, __ATOMIC_RELAXED);
  g_free (h);
}

static gboolean
dev_copy_from_host (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  memcpy (dst, src, size);
  __atomic_add_fetch (&stats.to_device, 1, __ATOMIC_RELAXED);
  return TRUE;
}

static gboolean
dev_copy_to_host (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  memcpy (dst, src, size);
  __atomic_add_fetch (&stats.to_host, 1, __ATOMIC_RELAXED);
  return TRUE;
}

static gboolean
dev_copy (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  memmove (dst, src, size);
  __atomic_add_fetch (&stats.within, 1, __ATOMIC_RELAXED);
  return TRUE;
}

static gboolean
dev_synchronize (OwbDevice *device, GError **error)
{
  return TRUE;
}

static OwbDevice the_device = {
  .name = "testdev",
  .alloc = dev_alloc,
  .free = dev_free,
  .copy_from_host = dev_copy_from_host,
  .copy_to_host = dev_copy_to_host,
  .copy = dev_copy,
  .synchronize = dev_synchronize,
};

typedef struct {
  OwbProvider *cpu;
} Testdev;

/* A claimed node: the CPU's kernel, run on testdev memory. */
typedef struct {
  OwbKernelDef def;        /* the CPU row with this provider's compute */
  OwbKernelChoice inner;   /* the CPU's choice */
  OwbProvider *cpu;
} Wrap;

/* Ops left to the host: those whose results are shapes or sizes (as a GPU provider leaves them), so
 * that models mix the two providers and values cross in both directions. */
static const char *const host_ops[] = {
  "Shape", "Size", "ConstantOfShape", "Range", "NonZero", "Unique", "NonMaxSuppression",
  "If", "Loop", "Scan", "SequenceMap", "Constant",
};

static gboolean
eligible (const OwbNode *node, const OwbValueType *const *input_types, const OwbValueType *output_types, char **reason)
{
  for (guint i = 0; i < G_N_ELEMENTS (host_ops); i++)
    if (strcmp (node->op_type, host_ops[i]) == 0 && (!node->domain[0] || strcmp (node->domain, "ai.onnx") == 0))
      {
        *reason = g_strdup_printf ("testdev leaves %s to the host", node->op_type);
        return FALSE;
      }
  for (int i = 0; i < node->n_inputs; i++)
    {
      const OwbValueType *t = input_types[i];
      if (!t)
        continue;
      if (t->kind != OWB_VALUE_TENSOR || !owb_value_type_kind_is_known (t))
        {
          *reason = g_strdup_printf ("input %d is not known to be a tensor", i);
          return FALSE;
        }
      if (t->dtype == OWB_TYPE_STRING)
        {
          *reason = g_strdup ("strings stay on the host");
          return FALSE;
        }
    }
  for (int o = 0; o < node->n_outputs; o++)
    {
      const OwbValueType *t = &output_types[o];
      if (!owb_value_type_kind_is_known (t))
        continue;
      if (t->kind != OWB_VALUE_TENSOR || t->dtype == OWB_TYPE_STRING)
        {
          *reason = g_strdup_printf ("output %d is a %s", o,
                                     t->kind != OWB_VALUE_TENSOR ? owb_value_kind_name (t->kind) : "string tensor");
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
testdev_supports (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                  const OwbValueType *output_types, char **reason)
{
  return eligible (node, input_types, output_types, reason);
}

static gboolean
input_on_host (const OwbKernelContext *ctx, const Wrap *w, int i)
{
  return (i < 64 && (w->def.host_inputs & (G_GUINT64_CONSTANT (1) << i)))
         || owb_op_input_is_host_data (ctx->node->domain, ctx->node->op_type, i);
}

static gboolean
testdev_compute (OwbKernelContext *ctx, GError **error)
{
  const Wrap *w = ctx->state;
  __atomic_add_fetch (&stats.kernels, 1, __ATOMIC_RELAXED);
  if (ctx->device != &the_device)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "testdev kernel run with device %s",
                            owb_device_get_name (ctx->device));
      return FALSE;
    }
  /* The session must have put every input where the contract says. */
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      if (!t)
        continue;
      OwbDevice *want = input_on_host (ctx, w, i) ? NULL : &the_device;
      if (t->device != want)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "testdev: input %d ('%s') is in %s memory, not %s",
                                i, ctx->node->inputs[i], owb_device_get_name (t->device), owb_device_get_name (want));
          return FALSE;
        }
    }
  OwbKernelContext inner = *ctx;
  inner.state = w->inner.state;
  if (!w->inner.def->compute (&inner, error))
    return FALSE;
  /* A CPU kernel may make an output itself in host memory (a new tensor, or a view of a host
   * value): the device's kernel must return it in device memory. */
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      OwbTensor *t = ctx->outputs[o];
      OwbDevice *want = (o < 64 && (ctx->host_outputs & (G_GUINT64_CONSTANT (1) << o))) ? NULL : &the_device;
      if (!t || t->kind != OWB_VALUE_TENSOR || t->device == want)
        continue;
      GError *local = NULL;
      OwbTensor *moved = owb_tensor_copy_to_device (t, want, &local);
      if (!moved)
        {
          owb_kernel_set_error (ctx, error, local->code, "output %d: %s", o, local->message);
          g_error_free (local);
          return FALSE;
        }
      owb_tensor_unref (t);
      ctx->outputs[o] = moved;
      __atomic_add_fetch (&stats.fixups, 1, __ATOMIC_RELAXED);
    }
  return TRUE;
}

static gboolean
testdev_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
               const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  Testdev *self = provider->priv;
  if (!eligible (node, input_types, output_types, reason))
    return FALSE;
  OwbKernelChoice inner = { 0 };
  if (!self->cpu->claim (self->cpu, node, opset, input_types, output_types, &inner, reason, error))
    return FALSE;
  if (inner.via_float32)
    {
      self->cpu->release (self->cpu, &inner);
      *reason = g_strdup ("testdev runs no float16 through float32");
      return FALSE;
    }
  Wrap *w = g_new0 (Wrap, 1);
  w->def = *inner.def;
  w->def.prepare = NULL;
  w->def.free_state = NULL;
  w->def.holds_input = NULL; /* the session uploads constants; the host copy stays */
  w->def.compute = testdev_compute;
  w->inner = inner;
  w->cpu = self->cpu;
  choice->def = &w->def;
  choice->state = w;
  choice->via_float32 = FALSE;
  return TRUE;
}

/* Groups: the "compiler" of this provider fuses runs of elementwise ops (2 or more) into one kernel,
 * which runs the members' CPU kernels in turn on device memory, with inference between them as the
 * executor would do. */
static const char *const group_ops[] = {
  "Abs", "Add", "Ceil", "Div", "Exp", "Floor", "Log", "Max", "Min", "Mul", "Neg", "Reciprocal", "Relu",
  "Sigmoid", "Sqrt", "Sub", "Tanh",
};

typedef struct {
  OwbKernelDef def;
  guint n;
  OwbNode **nodes;
  const Wrap **wraps; /* the members' choices (owned by the session) */
} Group;

static gboolean
group_op (const OwbNode *node)
{
  if (node->domain[0] && strcmp (node->domain, "ai.onnx") != 0)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (group_ops); i++)
    if (strcmp (node->op_type, group_ops[i]) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
group_compute (OwbKernelContext *ctx, GError **error)
{
  const Group *g = ctx->state;
  const OwbGraph *body = NULL;
  for (int a = 0; a < ctx->node->n_attributes; a++)
    if (strcmp (ctx->node->attributes[a].name, "body") == 0)
      body = ctx->node->attributes[a].g;
  g_assert (body != NULL && body->inputs->len == (guint) ctx->n_inputs && body->outputs->len == (guint) ctx->n_outputs);
  __atomic_add_fetch (&stats.groups, 1, __ATOMIC_RELAXED);
  GHashTable *values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) owb_tensor_unref);
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      if (t->device != &the_device)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "testdev group: input %d is in %s memory", i,
                                owb_device_get_name (t->device));
          g_hash_table_unref (values);
          return FALSE;
        }
      g_hash_table_insert (values, ((OwbValueInfo *) g_ptr_array_index (body->inputs, i))->name,
                           owb_tensor_ref ((OwbTensor *) t));
    }
  gboolean ok = TRUE;
  for (guint m = 0; ok && m < g->n; m++)
    {
      const OwbNode *node = g->nodes[m];
      int n_in = node->n_inputs, n_out = node->n_outputs;
      OwbTensor **in = g_new0 (OwbTensor *, MAX (n_in, 1));
      OwbValueType *in_types = g_new0 (OwbValueType, MAX (n_in, 1));
      const OwbValueType **in_ptrs = g_new0 (const OwbValueType *, MAX (n_in, 1));
      OwbValueType *out_types = g_new0 (OwbValueType, MAX (n_out, 1));
      OwbTensor **out = g_new0 (OwbTensor *, MAX (n_out, 1));
      gboolean *wanted = g_new (gboolean, MAX (n_out, 1));
      for (int i = 0; i < n_in; i++)
        if (node->inputs[i][0])
          {
            in[i] = g_hash_table_lookup (values, node->inputs[i]);
            g_assert (in[i] != NULL);
            owb_tensor_get_value_type (in[i], &in_types[i]);
            in_ptrs[i] = &in_types[i];
          }
      for (int o = 0; o < n_out; o++)
        owb_value_type_init_unknown (&out_types[o]);
      OwbInferContext ictx = {
        .node = node, .opset = node->opset, .n_inputs = n_in, .inputs = in_ptrs,
        .input_values = (const OwbTensor *const *) g_new0 (OwbTensor *, MAX (n_in, 1)),
        .n_outputs = n_out, .outputs = out_types, .graph = node->graph,
      };
      ok = owb_op_infer (owb_op_schema_lookup (node->domain, node->op_type, node->opset), &ictx, error);
      g_free ((gpointer) ictx.input_values);
      for (int o = 0; ok && o < n_out; o++)
        {
          wanted[o] = TRUE;
          int64_t dims[OWB_MAX_RANK];
          for (int d = 0; d < out_types[o].rank; d++)
            dims[d] = out_types[o].dims[d].value;
          out[o] = owb_device_new_tensor (&the_device, out_types[o].dtype, out_types[o].rank, dims, error);
          ok = out[o] != NULL;
        }
      if (ok)
        {
          OwbKernelContext inner = *ctx;
          inner.node = node;
          inner.opset = node->opset;
          inner.n_inputs = n_in;
          inner.inputs = in;
          inner.n_outputs = n_out;
          inner.outputs = out;
          inner.output_wanted = wanted;
          inner.state = g->wraps[m];
          inner.host_outputs = 0;
          ok = testdev_compute (&inner, error);
        }
      for (int o = 0; o < n_out; o++)
        if (ok && node->outputs[o][0])
          g_hash_table_insert (values, node->outputs[o], out[o]);
        else
          owb_tensor_unref (out[o]);
      g_free (in);
      g_free (in_types);
      g_free (in_ptrs);
      g_free (out_types);
      g_free (out);
      g_free (wanted);
    }
  for (int o = 0; ok && o < ctx->n_outputs; o++)
    {
      OwbTensor *t = g_hash_table_lookup (values, ((OwbValueInfo *) g_ptr_array_index (body->outputs, o))->name);
      g_assert (t != NULL);
      owb_tensor_unref (ctx->outputs[o]);
      ctx->outputs[o] = owb_tensor_ref (t);
    }
  g_hash_table_unref (values);
  return ok;
}

static gboolean
testdev_claim_group (OwbProvider *provider, const OwbGraph *graph, OwbNode *const *nodes,
                     const OwbKernelChoice *choices, guint n_nodes, OwbGroupChoice *group, char **reason,
                     GError **error)
{
  /* The first run of two or more groupable nodes. */
  guint first = 0, len = 0;
  for (guint i = 0; i < n_nodes && len < 2; i++)
    {
      if (group_op (nodes[i]))
        {
          if (len == 0)
            first = i;
          len++;
        }
      else
        len = 0;
    }
  for (guint i = first + len; len >= 2 && i < n_nodes && group_op (nodes[i]); i++)
    len++;
  if (len < 2)
    {
      *reason = g_strdup ("no run of two elementwise ops");
      return FALSE;
    }
  Group *g = g_new0 (Group, 1);
  g->def = (OwbKernelDef){ .op_type = "DeviceGroup", .domain = "ai.onnx.workbench", .since = 1,
                           .compute = group_compute };
  g->n = len;
  g->nodes = g_new (OwbNode *, len);
  g->wraps = g_new (const Wrap *, len);
  for (guint i = 0; i < len; i++)
    {
      g->nodes[i] = nodes[first + i];
      g->wraps[i] = choices[first + i].state;
    }
  group->first = first;
  group->n_nodes = len;
  group->choice.def = &g->def;
  group->choice.state = g;
  group->choice.via_float32 = FALSE;
  return TRUE;
}

static void
testdev_release (OwbProvider *provider, OwbKernelChoice *choice)
{
  if (choice->state && choice->def->compute == group_compute)
    {
      Group *g = choice->state;
      g_free (g->nodes);
      g_free (g->wraps);
      g_free (g);
      choice->state = NULL;
      return;
    }
  Wrap *w = choice->state;
  if (!w)
    return;
  w->cpu->release (w->cpu, &w->inner);
  g_free (w);
  choice->state = NULL;
}

static void
testdev_free (OwbProvider *provider)
{
  Testdev *self = provider->priv;
  self->cpu->free (self->cpu);
  g_free (self);
  g_free (provider);
}

OwbProvider *
owb_testdev_provider_new (void)
{
  OwbProvider *p = g_new0 (OwbProvider, 1);
  Testdev *self = g_new0 (Testdev, 1);
  self->cpu = owb_cpu_provider_new ();
  p->name = "testdev";
  p->description = "test device (host memory behind the device interface)";
  p->device = &the_device;
  p->supports = testdev_supports;
  p->claim = testdev_claim;
  p->claim_group = testdev_claim_group;
  p->release = testdev_release;
  p->free = testdev_free;
  p->priv = self;
  return p;
}

void
owb_testdev_register (void)
{
  owb_providers_register ("testdev", owb_testdev_provider_new);
}

void
owb_testdev_get_stats (OwbTestdevStats *out)
{
  out->allocs = __atomic_load_n (&stats.allocs, __ATOMIC_RELAXED);
  out->frees = __atomic_load_n (&stats.frees, __ATOMIC_RELAXED);
  out->live_bytes = __atomic_load_n (&stats.live_bytes, __ATOMIC_RELAXED);
  out->to_device = __atomic_load_n (&stats.to_device, __ATOMIC_RELAXED);
  out->to_host = __atomic_load_n (&stats.to_host, __ATOMIC_RELAXED);
  out->within = __atomic_load_n (&stats.within, __ATOMIC_RELAXED);
  out->kernels = __atomic_load_n (&stats.kernels, __ATOMIC_RELAXED);
  out->fixups = __atomic_load_n (&stats.fixups, __ATOMIC_RELAXED);
  out->groups = __atomic_load_n (&stats.groups, __ATOMIC_RELAXED);
}
