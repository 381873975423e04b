/* owb-session.c: session creation (infer, partition onto providers, resolve kernels, plan tensor
 * lifetimes) and execution. A session is immutable once created, so runs may be concurrent: all
 * per-run state lives in RunState. */
#include <owb/owb-session.h>
#include <owb/owb-validate.h>
#include <owb/owb-error.h>

#include "owb-arena.h"

#include <string.h>

typedef struct {
  OwbNode *node;
  const OwbOpSchema *schema;
  OwbProvider *provider;
  OwbKernelChoice choice;
  gboolean claimed;
  int *in_slots;  /* -1: missing optional input */
  int *out_slots; /* -1: unused optional output */
  int *release;   /* slots whose last reader is this step, -1 terminated */
} Step;

struct _OwbSession {
  OwbModel *model; /* the session's own copy, inferred and partitioned */
  GPtrArray *providers;
  OwbThreadPool *pool;
  OwbTraceHooks hooks;
  gboolean has_hooks;
  guint n_slots;
  GHashTable *slot_of;    /* name -> slot + 1 */
  OwbTensor **constants;  /* per slot: initializer, or NULL */
  Step *steps;
  guint n_steps;
  GPtrArray *inputs;      /* OwbValueInfo * to feed (borrowed from the graph) */
  GPtrArray *outputs;     /* OwbValueInfo * (borrowed) */
  int *output_slots;
};

void
owb_session_options_init (OwbSessionOptions *options)
{
  memset (options, 0, sizeof *options);
  options->optimize = OWB_OPTIMIZE_DISABLED;
}

static OwbModel *
copy_model (const OwbModel *model)
{
  OwbModel *copy = owb_model_new ();
  copy->ir_version = model->ir_version;
  copy->producer_name = g_strdup (model->producer_name);
  copy->producer_version = g_strdup (model->producer_version);
  copy->domain = g_strdup (model->domain);
  copy->model_version = model->model_version;
  copy->doc_string = g_strdup (model->doc_string);
  copy->base_dir = g_strdup (model->base_dir);
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      owb_model_set_opset (copy, imp->domain, imp->version);
    }
  copy->graph = owb_graph_dup (model->graph);
  copy->graph->model = copy;
  return copy;
}

static int
slot_get (OwbSession *s, const char *name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (s->slot_of, name)) - 1;
}

static int
slot_define (OwbSession *s, const char *name)
{
  int slot = slot_get (s, name);
  if (slot >= 0)
    return slot;
  slot = (int) s->n_slots++;
  g_hash_table_insert (s->slot_of, (gpointer) name, GINT_TO_POINTER (slot + 1));
  return slot;
}

static const OwbValueType *
lookup_type (GHashTable *types, const char *name)
{
  return g_hash_table_lookup (types, name);
}

/* Asks each provider in priority order; records the claim and every decline on the node. */
static gboolean
partition_step (OwbSession *s, Step *step, GHashTable *types, GError **error)
{
  OwbNode *node = step->node;
  const OwbValueType **in_types = g_new0 (const OwbValueType *, MAX (node->n_inputs, 1));
  OwbValueType *out_types = g_new (OwbValueType, MAX (node->n_outputs, 1));
  OwbValueType unknown;
  owb_value_type_init_unknown (&unknown);
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      {
        in_types[i] = lookup_type (types, node->inputs[i]);
        if (!in_types[i])
          in_types[i] = &unknown;
      }
  for (int o = 0; o < node->n_outputs; o++)
    {
      const OwbValueType *t = node->outputs[o][0] ? lookup_type (types, node->outputs[o]) : NULL;
      if (t)
        out_types[o] = *t;
      else
        owb_value_type_init_unknown (&out_types[o]);
    }
  owb_node_clear_claims (node);
  gboolean ok = FALSE;
  for (guint p = 0; p < s->providers->len && !ok; p++)
    {
      OwbProvider *provider = g_ptr_array_index (s->providers, p);
      char *reason = NULL;
      GError *local = NULL;
      if (provider->claim (provider, node, node->opset, in_types, out_types, &step->choice, &reason, &local))
        {
          step->provider = provider;
          step->claimed = TRUE;
          g_free (node->provider);
          node->provider = g_strdup (provider->name);
          ok = TRUE;
        }
      else if (local)
        {
          g_propagate_error (error, local);
          g_free (reason);
          g_free (in_types);
          g_free (out_types);
          return FALSE;
        }
      else
        owb_node_add_decline (node, provider->name, reason ? reason : "declined");
      g_free (reason);
    }
  if (!ok)
    {
      char *who = owb_node_describe (node);
      GString *why = g_string_new (NULL);
      for (guint d = 0; node->declines && d < node->declines->len; d++)
        {
          OwbDecline *dec = g_ptr_array_index (node->declines, d);
          g_string_append_printf (why, "%s%s: %s", d ? "; " : "", dec->provider, dec->reason);
        }
      g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "%s: unsupported op %s%s%s at opset %d: %s", who,
                   node->domain && node->domain[0] ? node->domain : "", node->domain && node->domain[0] ? "." : "",
                   node->op_type, node->opset, why->str);
      g_string_free (why, TRUE);
      g_free (who);
    }
  g_free (in_types);
  g_free (out_types);
  return ok;
}

static GHashTable *
collect_types (const OwbGraph *graph)
{
  GHashTable *types = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *lists[] = { graph->value_infos, graph->outputs, graph->inputs };
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l]->len; i++)
      {
        OwbValueInfo *info = g_ptr_array_index (lists[l], i);
        if (info->has_type)
          g_hash_table_insert (types, info->name, &info->type);
      }
  return types;
}

OwbSession *
owb_session_new (OwbModel *model, const OwbSessionOptions *options, GError **error)
{
  OwbSessionOptions defaults;
  if (!options)
    {
      owb_session_options_init (&defaults);
      options = &defaults;
    }
  if (!options->providers || options->providers->len == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "no execution providers given (owb_providers_new_from_list (\"cpu\") gives the CPU one)");
      return NULL;
    }
  OwbSession *s = g_new0 (OwbSession, 1);
  s->providers = g_ptr_array_ref (options->providers);
  s->model = copy_model (model);
  s->slot_of = g_hash_table_new (g_str_hash, g_str_equal);
  if (options->hooks && (options->hooks->node_begin || options->hooks->node_end))
    {
      s->hooks = *options->hooks;
      s->has_hooks = TRUE;
    }
  if (!owb_model_infer_shapes (s->model, error))
    goto fail;

  OwbGraph *graph = s->model->graph;
  /* Slots: initializers, then inputs, then node outputs. */
  for (guint i = 0; i < graph->initializer_names->len; i++)
    slot_define (s, g_ptr_array_index (graph->initializer_names, i));
  s->inputs = g_ptr_array_new ();
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->inputs, i);
      slot_define (s, info->name);
      if (!owb_graph_get_initializer (graph, info->name))
        g_ptr_array_add (s->inputs, info);
    }
  s->n_steps = graph->nodes->len;
  s->steps = g_new0 (Step, MAX (s->n_steps, 1));
  for (guint n = 0; n < s->n_steps; n++)
    {
      Step *step = &s->steps[n];
      step->node = g_ptr_array_index (graph->nodes, n);
      step->in_slots = g_new (int, MAX (step->node->n_inputs, 1));
      step->out_slots = g_new (int, MAX (step->node->n_outputs, 1));
      for (int i = 0; i < step->node->n_inputs; i++)
        step->in_slots[i] = step->node->inputs[i][0] ? slot_get (s, step->node->inputs[i]) : -1;
      for (int o = 0; o < step->node->n_outputs; o++)
        step->out_slots[o] = step->node->outputs[o][0] ? slot_define (s, step->node->outputs[o]) : -1;
    }
  s->constants = g_new0 (OwbTensor *, MAX (s->n_slots, 1));
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      int slot = slot_get (s, g_ptr_array_index (graph->initializer_names, i));
      s->constants[slot] = g_ptr_array_index (graph->initializers, i);
    }
  s->outputs = g_ptr_array_new ();
  s->output_slots = g_new (int, MAX (graph->outputs->len, 1));
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->outputs, i);
      g_ptr_array_add (s->outputs, info);
      s->output_slots[i] = slot_get (s, info->name);
    }

  /* Kernels: schema and provider per node. */
  GHashTable *types = collect_types (graph);
  for (guint n = 0; n < s->n_steps; n++)
    {
      Step *step = &s->steps[n];
      OwbNode *node = step->node;
      step->schema = owb_op_schema_lookup (node->domain, node->op_type, node->opset);
      if (!step->schema)
        {
          char *who = owb_node_describe (node);
          if (owb_op_schema_exists (node->domain, node->op_type))
            g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "%s: op %s is not defined at opset %d", who,
                         node->op_type, node->opset);
          else
            g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "%s: unsupported op %s%s%s (opset %d)", who,
                         node->domain && node->domain[0] ? node->domain : "",
                         node->domain && node->domain[0] ? "." : "", node->op_type, node->opset);
          g_free (who);
          g_hash_table_unref (types);
          goto fail;
        }
      if (!partition_step (s, step, types, error))
        {
          g_hash_table_unref (types);
          goto fail;
        }
    }
  g_hash_table_unref (types);

  /* Lifetimes: each slot is released after its last reader; graph outputs and constants never. */
  int *last = g_new (int, MAX (s->n_slots, 1));
  for (guint i = 0; i < s->n_slots; i++)
    last[i] = -1;
  for (guint n = 0; n < s->n_steps; n++)
    {
      Step *step = &s->steps[n];
      for (int o = 0; o < step->node->n_outputs; o++)
        if (step->out_slots[o] >= 0)
          last[step->out_slots[o]] = (int) n;
      for (int i = 0; i < step->node->n_inputs; i++)
        if (step->in_slots[i] >= 0)
          last[step->in_slots[i]] = (int) n;
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    if (s->output_slots[i] >= 0)
      last[s->output_slots[i]] = -1;
  for (guint slot = 0; slot < s->n_slots; slot++)
    if (s->constants[slot])
      last[slot] = -1;
  for (guint n = 0; n < s->n_steps; n++)
    {
      Step *step = &s->steps[n];
      GArray *rel = g_array_new (FALSE, FALSE, sizeof (int));
      for (guint slot = 0; slot < s->n_slots; slot++)
        if (last[slot] == (int) n)
          g_array_append_val (rel, slot);
      int end = -1;
      g_array_append_val (rel, end);
      step->release = (int *) g_array_free (rel, FALSE);
    }
  g_free (last);

  s->pool = owb_thread_pool_new (options->n_threads > 0 ? options->n_threads : (int) g_get_num_processors ());
  return s;

fail:
  owb_session_free (s);
  return NULL;
}

void
owb_session_free (OwbSession *s)
{
  if (!s)
    return;
  for (guint n = 0; n < s->n_steps; n++)
    {
      Step *step = &s->steps[n];
      if (step->claimed && step->provider->release)
        step->provider->release (step->provider, &step->choice);
      g_free (step->in_slots);
      g_free (step->out_slots);
      g_free (step->release);
    }
  g_free (s->steps);
  g_free (s->constants);
  g_free (s->output_slots);
  if (s->inputs)
    g_ptr_array_unref (s->inputs);
  if (s->outputs)
    g_ptr_array_unref (s->outputs);
  owb_thread_pool_free (s->pool);
  g_hash_table_unref (s->slot_of);
  owb_model_unref (s->model);
  g_ptr_array_unref (s->providers);
  g_free (s);
}

const OwbGraph *
owb_session_get_graph (const OwbSession *s)
{
  return s->model->graph;
}

guint
owb_session_get_n_inputs (const OwbSession *s)
{
  return s->inputs->len;
}

const OwbValueInfo *
owb_session_get_input (const OwbSession *s, guint i)
{
  return i < s->inputs->len ? g_ptr_array_index (s->inputs, i) : NULL;
}

guint
owb_session_get_n_outputs (const OwbSession *s)
{
  return s->outputs->len;
}

const OwbValueInfo *
owb_session_get_output (const OwbSession *s, guint i)
{
  return i < s->outputs->len ? g_ptr_array_index (s->outputs, i) : NULL;
}

/* A fed tensor must match the declared element type and every known dimension. */
static gboolean
check_feed (const OwbValueInfo *info, const OwbTensor *t, GError **error)
{
  if (!info->has_type || info->type.kind != OWB_VALUE_TENSOR)
    return TRUE;
  char *want = owb_value_type_to_string (&info->type);
  char *got = owb_tensor_shape_to_string (t);
  gboolean ok = t->kind == OWB_VALUE_TENSOR && (info->type.dtype == OWB_TYPE_UNDEFINED || t->dtype == info->type.dtype);
  if (!ok)
    g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "input '%s' expects %s, got %s", info->name, want, got);
  else if (info->type.rank >= 0)
    {
      ok = info->type.rank == t->rank;
      for (int d = 0; ok && d < t->rank; d++)
        if (owb_dim_is_known (info->type.dims[d]) && info->type.dims[d].value != t->dims[d])
          ok = FALSE;
      if (!ok)
        g_set_error (error, OWB_ERROR, OWB_ERROR_SHAPE, "input '%s' expects shape %s, got %s", info->name, want, got);
    }
  g_free (want);
  g_free (got);
  return ok;
}

typedef struct {
  OwbSession *session;
  OwbTensor **values;
  OwbArena *arena;
} RunState;

static gboolean
run_step (RunState *rs, guint index, GError **error)
{
  OwbSession *s = rs->session;
  Step *step = &s->steps[index];
  OwbNode *node = step->node;
  int n_in = node->n_inputs, n_out = node->n_outputs;
  /* Heap, not stack: a node may have very many inputs. */
  OwbTensor **inputs = g_new0 (OwbTensor *, MAX (n_in, 1));
  OwbValueType *in_types = g_new (OwbValueType, MAX (n_in, 1));
  const OwbValueType **in_type_ptrs = g_new0 (const OwbValueType *, MAX (n_in, 1));
  OwbValueType *out_types = g_new (OwbValueType, MAX (n_out, 1));
  OwbTensor **outputs = g_new0 (OwbTensor *, MAX (n_out, 1));
  gboolean *wanted = g_new0 (gboolean, MAX (n_out, 1));
  OwbTensor **converted = NULL;
  gboolean ok = TRUE;

  for (int i = 0; i < n_in; i++)
    {
      int slot = step->in_slots[i];
      inputs[i] = slot >= 0 ? rs->values[slot] : NULL;
      in_type_ptrs[i] = NULL;
      if (slot >= 0 && !inputs[i])
        {
          char *who = owb_node_describe (node);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: input '%s' has no value", who, node->inputs[i]);
          g_free (who);
          ok = FALSE;
          goto out;
        }
      if (inputs[i])
        {
          owb_tensor_get_value_type (inputs[i], &in_types[i]);
          in_type_ptrs[i] = &in_types[i];
        }
    }
  OwbInferContext ictx = {
    .node = node,
    .opset = node->opset,
    .n_inputs = n_in,
    .inputs = in_type_ptrs,
    .input_values = (const OwbTensor *const *) inputs,
    .n_outputs = n_out,
    .outputs = out_types,
    .graph = node->graph,
  };
  if (!owb_op_infer (step->schema, &ictx, error))
    {
      ok = FALSE;
      goto out;
    }

  gboolean via32 = step->choice.via_float32;
  if (via32)
    {
      converted = g_new0 (OwbTensor *, MAX (n_in, 1));
      for (int i = 0; i < n_in; i++)
        {
          if (inputs[i] && (inputs[i]->dtype == OWB_TYPE_FLOAT16 || inputs[i]->dtype == OWB_TYPE_BFLOAT16))
            {
              converted[i] = owb_tensor_cast (inputs[i], OWB_TYPE_FLOAT, error);
              if (!converted[i])
                {
                  ok = FALSE;
                  break;
                }
              inputs[i] = converted[i];
            }
        }
    }
  for (int o = 0; o < n_out; o++)
    {
      outputs[o] = NULL;
      wanted[o] = step->out_slots[o] >= 0;
    }
  for (int o = 0; ok && o < n_out; o++)
    {
      OwbValueType *t = &out_types[o];
      if (t->kind != OWB_VALUE_TENSOR || !owb_value_type_is_fully_known (t) || t->dtype == OWB_TYPE_UNDEFINED)
        continue;
      OwbDataType dtype = t->dtype;
      if (via32 && (dtype == OWB_TYPE_FLOAT16 || dtype == OWB_TYPE_BFLOAT16))
        dtype = OWB_TYPE_FLOAT;
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d].value;
      outputs[o] = _owb_arena_new_tensor (rs->arena, dtype, t->rank, dims, error);
      if (!outputs[o])
        ok = FALSE;
    }
  if (ok)
    {
      OwbKernelContext kctx = {
        .node = node,
        .opset = node->opset,
        .n_inputs = n_in,
        .inputs = inputs,
        .n_outputs = n_out,
        .outputs = outputs,
        .output_wanted = wanted,
        .state = step->choice.state,
        .pool = s->pool,
        .run_data = rs,
      };
      if (s->has_hooks && s->hooks.node_begin)
        s->hooks.node_begin (node, (int) index, s->hooks.user_data);
      ok = step->choice.def->compute (&kctx, error);
      if (s->has_hooks && s->hooks.node_end)
        s->hooks.node_end (node, (int) index, outputs, n_out, s->hooks.user_data);
    }
  if (via32)
    {
      for (int i = 0; i < n_in; i++)
        owb_tensor_unref (converted[i]);
      for (int o = 0; ok && o < n_out; o++)
        {
          OwbDataType want = out_types[o].dtype;
          if (outputs[o] && outputs[o]->dtype == OWB_TYPE_FLOAT
              && (want == OWB_TYPE_FLOAT16 || want == OWB_TYPE_BFLOAT16))
            {
              OwbTensor *c = owb_tensor_cast (outputs[o], want, error);
              owb_tensor_unref (outputs[o]);
              outputs[o] = c;
              if (!c)
                ok = FALSE;
            }
        }
    }
  for (int o = 0; o < n_out; o++)
    {
      if (ok && wanted[o] && !outputs[o])
        {
          char *who = owb_node_describe (node);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: produced no value for output '%s'", who,
                       node->outputs[o]);
          g_free (who);
          ok = FALSE;
        }
      if (ok && wanted[o])
        rs->values[step->out_slots[o]] = outputs[o];
      else
        owb_tensor_unref (outputs[o]);
    }
  if (ok)
    for (const int *r = step->release; *r >= 0; r++)
      g_clear_pointer (&rs->values[*r], owb_tensor_unref);
out:
  g_free (inputs);
  g_free (in_types);
  g_free (in_type_ptrs);
  g_free (out_types);
  g_free (outputs);
  g_free (wanted);
  g_free (converted);
  return ok;
}

gboolean
owb_session_run (OwbSession *s, guint n_inputs, const char *const *input_names, OwbTensor *const *inputs,
                 guint n_outputs, const char *const *output_names, OwbTensor **outputs, OwbRunStats *stats,
                 GCancellable *cancellable, GError **error)
{
  RunState rs = { s, g_new0 (OwbTensor *, MAX (s->n_slots, 1)), _owb_arena_new () };
  gboolean ok = TRUE;
  for (guint slot = 0; slot < s->n_slots; slot++)
    if (s->constants[slot])
      rs.values[slot] = owb_tensor_ref (s->constants[slot]);
  for (guint i = 0; ok && i < n_inputs; i++)
    {
      int slot = slot_get (s, input_names[i]);
      const OwbValueInfo *info = NULL;
      for (guint k = 0; k < s->model->graph->inputs->len; k++)
        {
          const OwbValueInfo *cand = g_ptr_array_index (s->model->graph->inputs, k);
          if (strcmp (cand->name, input_names[i]) == 0)
            info = cand;
        }
      if (slot < 0 || !info)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "the model has no input named '%s'",
                       input_names[i]);
          ok = FALSE;
          break;
        }
      if (!inputs[i])
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "input '%s' is NULL", input_names[i]);
          ok = FALSE;
          break;
        }
      ok = check_feed (info, inputs[i], error);
      if (ok)
        {
          owb_tensor_unref (rs.values[slot]);
          rs.values[slot] = owb_tensor_ref (inputs[i]);
        }
    }
  for (guint i = 0; ok && i < s->inputs->len; i++)
    {
      const OwbValueInfo *info = g_ptr_array_index (s->inputs, i);
      if (!rs.values[slot_get (s, info->name)])
        {
          char *want = owb_value_type_to_string (&info->type);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "input '%s' (%s) was not given", info->name, want);
          g_free (want);
          ok = FALSE;
        }
    }
  guint n_run = 0;
  for (guint n = 0; ok && n < s->n_steps; n++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      ok = run_step (&rs, n, error);
      n_run++;
    }
  if (ok)
    {
      guint want = output_names ? n_outputs : s->outputs->len;
      for (guint i = 0; i < want; i++)
        outputs[i] = NULL;
      for (guint i = 0; ok && i < want; i++)
        {
          int slot = output_names ? slot_get (s, output_names[i]) : s->output_slots[i];
          if (slot < 0)
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "the model has no value named '%s'",
                           output_names[i]);
              ok = FALSE;
            }
          else if (!rs.values[slot])
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                           "'%s' is released before the end of the run; only graph outputs can be fetched",
                           output_names ? output_names[i] : "output");
              ok = FALSE;
            }
          else
            outputs[i] = owb_tensor_ref (rs.values[slot]);
        }
      if (!ok)
        for (guint i = 0; i < want; i++)
          g_clear_pointer (&outputs[i], owb_tensor_unref);
    }
  if (stats)
    {
      stats->peak_bytes = _owb_arena_get_peak (rs.arena);
      stats->allocated_bytes = _owb_arena_get_allocated (rs.arena);
      stats->n_nodes_run = n_run;
    }
  for (guint slot = 0; slot < s->n_slots; slot++)
    owb_tensor_unref (rs.values[slot]);
  g_free (rs.values);
  _owb_arena_close (rs.arena);
  return ok;
}
