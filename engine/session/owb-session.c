/* owb-session.c: session creation (infer, partition onto providers, resolve kernels, plan tensor
 * lifetimes) and execution. A session is immutable once created, so runs may be concurrent: all
 * per-run state lives in RunState. */
#include <owb/owb-session.h>
#include <owb/owb-optimizer.h>
#include <owb/owb-validate.h>
#include <owb/owb-error.h>

#include "owb-arena.h"
#include "owb-trace-private.h"
#include "../ir/owb-ir-private.h"
#include "../owb-tensor-private.h"

#include <string.h>

typedef struct _Plan Plan;

typedef struct _Step {
  OwbNode *node;
  const OwbOpSchema *schema;
  OwbProvider *provider;
  OwbKernelChoice choice;
  gboolean claimed;
  gboolean is_copy;       /* a MemcpyFromHost/MemcpyToHost the session inserted */
  OwbDevice *device;      /* where the kernel's tensors live (its provider's); NULL: host memory */
  guint device_index;     /* in the session's devices; 0: host */
  guint64 host_in;        /* on a device: inputs (bit i) read in host memory */
  guint64 host_out;       /* on a device: outputs made in host memory */
  guint64 fixed_in;       /* inputs (bit i) whose value is the same in every run (fixed_slots) */
  int *in_slots;  /* -1: missing optional input */
  int *out_slots; /* -1: unused optional output */
  int *release;   /* slots whose last reader is this step, -1 terminated */
  struct _Step *members; /* a DeviceGroup's steps, whose choices its kernel may run */
  guint n_members;
} Step;

/* What running one graph needs: the main graph and every subgraph get one. */
struct _Plan {
  OwbGraph *graph;
  guint n_slots;
  GHashTable *slot_of;    /* name -> slot + 1 */
  OwbTensor **constants;  /* per slot: initializer, or NULL */
  Step *steps;
  guint n_steps;
  int *input_slots;       /* per graph input */
  int *output_slots;      /* per graph output */
  char **outer_names;     /* values read from enclosing graphs, NULL-terminated ... */
  int *outer_slots;       /* ... and the local slots they are bound to */
  char *path;             /* for traces: "" for the main graph, "node/attribute" below it */
  GPtrArray *owned_names;   /* strings the plan keeps: names of uploaded constants, renamed ones */
  GPtrArray *owned_tensors; /* constants uploaded to devices */
  guint memo_base;          /* where its steps' memos start in a run context's */
};

/* What a step's inference gave in an earlier run: while the step's inputs keep their types, and its
 * inference read no input's value but constants' (Step.fixed_in), its outputs keep theirs, and the step skips inference (which
 * parses attributes and checks shapes: a few microseconds per node, several percent of a small
 * network's run). */
typedef struct {
  gboolean valid;
  OwbValueType *in_types;  /* n_inputs (entries of missing inputs unused) */
  OwbValueType *out_types; /* n_outputs */
} InferMemo;

/* What one run at a time uses and later runs reuse: the arena and the memos of every plan's steps
 * (a subgraph's too: a Loop body or If branch runs many times a run, and inferred its nodes every
 * time). */
typedef struct {
  OwbArena *arena;   /* host memory: arenas[0] */
  OwbArena **arenas; /* per device of the session */
  guint n_arenas;
  InferMemo *memos;
  guint n_memos;
} RunContext;

static void
run_context_free (RunContext *c)
{
  for (guint d = 0; d < c->n_arenas; d++)
    _owb_arena_close (c->arenas[d]);
  g_free (c->arenas);
  for (guint i = 0; i < c->n_memos; i++)
    {
      g_free (c->memos[i].in_types);
      g_free (c->memos[i].out_types);
    }
  g_free (c->memos);
  g_free (c);
}

struct _OwbSession {
  OwbModel *model; /* the session's own copy, inferred and partitioned */
  GPtrArray *providers;
  GPtrArray *devices;     /* OwbDevice *: [0] NULL (the host), then each provider's own */
  OwbThreadPool *pool;
  OwbTraceHooks hooks;
  gboolean has_hooks;
  gsize memory_limit;     /* OwbSessionOptions.memory_limit */
  Plan *main;
  GHashTable *plans;      /* OwbGraph * -> Plan *, every subgraph */
  GPtrArray *inputs;      /* OwbValueInfo * to feed (borrowed from the graph) */
  GHashTable *input_info; /* name -> OwbValueInfo * of every graph input (borrowed): a feed's check
                           * is one lookup, not a walk over the inputs (10^6 feeds were quadratic) */
  GPtrArray *outputs;     /* OwbValueInfo * (borrowed) */
  OwbOptimizeReport *optimize_report;
  GMutex contexts_lock;
  GPtrArray *run_contexts; /* RunContext *: idle ones kept from earlier runs, for the next */
  gboolean owns_model;     /* made by owb_session_new_take: no one else reads the initializers */
  guint n_memos;           /* steps of every plan, main and subgraphs */
};

/* Idle run contexts kept: one per concurrent run up to this; more are freed when their run ends. */
#define MAX_IDLE_CONTEXTS 4

void
owb_session_options_init (OwbSessionOptions *options)
{
  memset (options, 0, sizeof *options);
  options->optimize = OWB_OPTIMIZE_DISABLED;
}

static int
slot_get (const Plan *p, const char *name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (p->slot_of, name)) - 1;
}

static int
slot_define (Plan *p, const char *name)
{
  int slot = slot_get (p, name);
  if (slot >= 0)
    return slot;
  slot = (int) p->n_slots++;
  g_hash_table_insert (p->slot_of, (gpointer) name, GINT_TO_POINTER (slot + 1));
  return slot;
}

static const OwbValueType *
lookup_type (GHashTable *types, const char *name)
{
  return g_hash_table_lookup (types, name);
}

static guint
device_index (const OwbSession *s, const OwbDevice *device)
{
  for (guint d = 0; d < s->devices->len; d++)
    if (g_ptr_array_index (s->devices, d) == device)
      return d;
  g_return_val_if_reached (0);
}

/* Where a claimed step's tensors live: its provider's device, except the inputs that carry shapes
 * (for every provider) and those its kernel row reads or writes on the host. */
static void
step_set_device (const OwbSession *s, Step *step)
{
  const OwbNode *node = step->node;
  step->device = step->provider->device;
  step->device_index = device_index (s, step->device);
  step->host_in = step->host_out = 0;
  if (!step->device)
    return;
  const OwbKernelDef *def = step->choice.def;
  for (int i = 0; i < node->n_inputs && i < 64; i++)
    if ((def->host_inputs & (G_GUINT64_CONSTANT (1) << i)) || owb_op_input_is_host_data (node->domain, node->op_type, i))
      step->host_in |= G_GUINT64_CONSTANT (1) << i;
  step->host_out = def->host_outputs;
}

/* Where input i of the step is read, and output o made. */
static OwbDevice *
step_input_device (const Step *step, int i)
{
  return step->device && (i >= 64 || !(step->host_in & (G_GUINT64_CONSTANT (1) << i))) ? step->device : NULL;
}

static OwbDevice *
step_output_device (const Step *step, int o)
{
  return step->device && (o >= 64 || !(step->host_out & (G_GUINT64_CONSTANT (1) << o))) ? step->device : NULL;
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
      /* The query first: a provider that would decline prepares nothing. */
      if (provider->supports && !provider->supports (provider, node, node->opset, in_types, out_types, &reason))
        {
          owb_node_add_decline (node, provider->name, reason ? reason : "declined");
          g_free (reason);
          continue;
        }
      if (provider->claim (provider, node, node->opset, in_types, out_types, &step->choice, &reason, &local))
        {
          step->provider = provider;
          step->claimed = TRUE;
          step_set_device (s, step);
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

/* name -> OwbValueType *: the graph's value infos, and the initializers' own types (an
 * initializer that is no graph input has no value info, and a provider deciding on a weight's
 * dtype needs it). */
static GHashTable *
collect_types (const OwbGraph *graph)
{
  GHashTable *types = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  GPtrArray *lists[] = { graph->value_infos, graph->outputs, graph->inputs };
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l]->len; i++)
      {
        OwbValueInfo *info = g_ptr_array_index (lists[l], i);
        if (info->has_type)
          g_hash_table_insert (types, info->name, g_memdup2 (&info->type, sizeof info->type));
      }
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      const char *name = g_ptr_array_index (graph->initializer_names, i);
      if (g_hash_table_contains (types, name))
        continue;
      OwbValueType *type = g_new (OwbValueType, 1);
      owb_tensor_get_value_type (g_ptr_array_index (graph->initializers, i), type);
      g_hash_table_insert (types, (gpointer) name, type);
    }
  return types;
}

static void plan_free (Plan *p);

static void
add_subgraph_reads (const OwbNode *node, GHashTable *reads)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        _owb_graph_collect_outer_refs (attr->g, reads);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        _owb_graph_collect_outer_refs (attr->graphs[k], reads);
    }
}

static Plan *plan_new (OwbSession *s, OwbGraph *graph, const char *path, int depth, GError **error);

/* A subgraph's path in traces: its parent graph's, the node (by name, or "Op#index" when it has
 * none) and the attribute ("body", or "branches[1]" in a list of graphs). */
static char *
subgraph_path (const Plan *parent, const OwbNode *node, guint index, const OwbAttribute *attr, int k)
{
  GString *path = g_string_new (parent->path);
  if (path->len)
    g_string_append_c (path, '/');
  if (node->name && node->name[0])
    g_string_append (path, node->name);
  else
    g_string_append_printf (path, "%s#%u", node->op_type, index);
  g_string_append_printf (path, "/%s", attr->name ? attr->name : "");
  if (attr->type == OWB_ATTR_GRAPHS)
    g_string_append_printf (path, "[%d]", k);
  return g_string_free (path, FALSE);
}

static gboolean
plan_subgraphs (OwbSession *s, const Plan *parent, guint index, const OwbNode *node, int depth, GError **error)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      OwbGraph *const *graphs = attr->type == OWB_ATTR_GRAPH ? &attr->g : attr->graphs;
      int n = attr->type == OWB_ATTR_GRAPH ? (attr->g != NULL) : attr->type == OWB_ATTR_GRAPHS ? attr->n : 0;
      for (int k = 0; k < n; k++)
        {
          char *path = subgraph_path (parent, node, index, attr, k);
          Plan *sub = plan_new (s, graphs[k], path, depth + 1, error);
          g_free (path);
          if (!sub)
            return FALSE;
          g_hash_table_insert (s->plans, graphs[k], sub);
        }
    }
  return TRUE;
}

/* A session that owns its model frees the storage of the main graph's initializers whose readers
 * all hold their values (packed weight copies; else a transformer's weights are in memory twice),
 * each as soon as its last reader is prepared, so that the load never holds both copies of all of
 * them. Only where no subgraph reads the value, it is no graph output, and no one but the graph
 * and those kernels has a reference to it (a caller that kept one keeps the values too). */
typedef struct {
  int *remaining; /* per slot: readers not prepared yet */
  int *holders;   /* readers prepared that hold the values */
  gboolean *keep;
} HeldConstants;

static void
held_constants_init (HeldConstants *h, const Plan *p)
{
  h->remaining = g_new0 (int, MAX (p->n_slots, 1));
  h->holders = g_new0 (int, MAX (p->n_slots, 1));
  h->keep = g_new0 (gboolean, MAX (p->n_slots, 1));
  GHashTable *names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; n < p->n_steps; n++)
    {
      const Step *step = &p->steps[n];
      add_subgraph_reads (step->node, names);
      for (int i = 0; i < step->node->n_inputs; i++)
        if (step->in_slots[i] >= 0)
          h->remaining[step->in_slots[i]]++;
    }
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      int slot = slot_get (p, key);
      if (slot >= 0)
        h->keep[slot] = TRUE;
    }
  g_hash_table_unref (names);
  for (guint i = 0; i < p->graph->outputs->len; i++)
    if (p->output_slots[i] >= 0)
      h->keep[p->output_slots[i]] = TRUE;
}

/* After step's kernel is prepared. */
static void
held_constants_step (HeldConstants *h, const Plan *p, const Step *step)
{
  const OwbKernelDef *def = step->claimed ? step->choice.def : NULL;
  for (int i = 0; i < step->node->n_inputs; i++)
    {
      int slot = step->in_slots[i];
      OwbTensor *t = slot >= 0 ? p->constants[slot] : NULL;
      if (!t)
        continue;
      if (def && def->holds_input && !step->choice.via_float32 && def->holds_input (step->choice.state, i))
        h->holders[slot]++;
      else
        h->keep[slot] = TRUE;
      /* the graph's reference and one per holding kernel */
      if (--h->remaining[slot] == 0 && !h->keep[slot] && h->holders[slot] > 0 && t->data
          && t->kind == OWB_VALUE_TENSOR && t->dtype != OWB_TYPE_STRING
          && g_atomic_int_get (&t->ref_count) == 1 + h->holders[slot])
        _owb_tensor_release_storage (t);
    }
}

static void
held_constants_clear (HeldConstants *h)
{
  g_free (h->remaining);
  g_free (h->holders);
  g_free (h->keep);
}

static gboolean
groupable (const Step *step, const OwbProvider *provider)
{
  return step->claimed && step->provider == provider && !_owb_node_has_subgraph (step->node);
}

/* Replaces steps [a, a + k) by one DeviceGroup step running the provider's group kernel. The
 * nodes move into the group node's body; their own choices stay alive with the group step. */
static void
group_steps (OwbSession *s, Plan *p, guint a, guint k, const OwbKernelChoice *choice, const int *last_read)
{
  Step *members = &p->steps[a];
  OwbProvider *provider = members[0].provider;
  GHashTable *made = g_hash_table_new (NULL, NULL);
  GArray *in = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *out = g_array_new (FALSE, FALSE, sizeof (int));
  GPtrArray *in_names = g_ptr_array_new (), *out_names = g_ptr_array_new ();
  GArray *in_host = g_array_new (FALSE, FALSE, sizeof (gboolean));
  for (guint m = 0; m < k; m++)
    {
      const Step *st = &members[m];
      for (int i = 0; i < st->node->n_inputs; i++)
        {
          int slot = st->in_slots[i];
          if (slot < 0 || g_hash_table_contains (made, GINT_TO_POINTER (slot + 1)))
            continue;
          gboolean host = owb_op_input_is_host_data (st->node->domain, st->node->op_type, i);
          guint j;
          for (j = 0; j < in->len && g_array_index (in, int, j) != slot; j++)
            ;
          if (j == in->len)
            {
              g_array_append_val (in, slot);
              g_ptr_array_add (in_names, st->node->inputs[i]);
              g_array_append_val (in_host, host);
            }
          else
            g_array_index (in_host, gboolean, j) &= host;
        }
      for (int o = 0; o < st->node->n_outputs; o++)
        {
          int slot = st->out_slots[o];
          if (slot < 0)
            continue;
          g_hash_table_add (made, GINT_TO_POINTER (slot + 1));
          if (last_read[slot] >= (int) (a + k))
            {
              g_array_append_val (out, slot);
              g_ptr_array_add (out_names, st->node->outputs[o]);
            }
        }
    }

  OwbGraph *graph = p->graph;
  g_autofree char *name = g_strdup_printf ("DeviceGroup_%s", members[0].node->name && members[0].node->name[0]
                                                                  ? members[0].node->name : members[0].node->op_type);
  OwbNode *node = owb_node_new ("DeviceGroup", OWB_DOMAIN, name);
  for (guint i = 0; i < in_names->len; i++)
    owb_node_add_input (node, g_ptr_array_index (in_names, i));
  for (guint o = 0; o < out_names->len; o++)
    owb_node_add_output (node, g_ptr_array_index (out_names, o));
  node->opset = 1;
  node->graph = graph;
  node->provider = g_strdup (provider->name);
  OwbGraph *body = owb_graph_new (node->name);
  body->parent = graph;
  body->model = graph->model;
  for (guint m = 0; m < k; m++)
    {
      OwbNode *member = g_ptr_array_steal_index (graph->nodes, a);
      member->graph = body;
      g_ptr_array_add (body->nodes, member);
    }
  /* The body's inputs and outputs name, in the members' own names, what the group node's inputs
   * and outputs are in order (the session may rename the group node's values later). */
  for (guint i = 0; i < in_names->len; i++)
    g_ptr_array_add (body->inputs, owb_value_info_new (g_ptr_array_index (in_names, i), NULL));
  for (guint o = 0; o < out_names->len; o++)
    g_ptr_array_add (body->outputs, owb_value_info_new (g_ptr_array_index (out_names, o), NULL));
  g_ptr_array_insert (graph->nodes, a, node);
  OwbAttribute *attr = owb_node_add_attribute (node, "body", OWB_ATTR_GRAPH);
  attr->g = body;

  Step group = { 0 };
  group.node = node;
  group.schema = owb_op_schema_lookup (OWB_DOMAIN, "DeviceGroup", 1);
  group.provider = provider;
  group.claimed = TRUE;
  group.choice = *choice;
  group.members = g_new (Step, k);
  memcpy (group.members, members, k * sizeof (Step));
  group.n_members = k;
  group.in_slots = (int *) g_array_free (in, FALSE);
  group.out_slots = (int *) g_array_free (out, FALSE);
  step_set_device (s, &group);
  for (guint i = 0; i < in_host->len && i < 64; i++)
    if (g_array_index (in_host, gboolean, i))
      group.host_in |= G_GUINT64_CONSTANT (1) << i;
  /* The group takes the members' places in the step list. */
  memmove (&p->steps[a + 1], &p->steps[a + k], (p->n_steps - a - k) * sizeof (Step));
  p->steps[a] = group;
  p->n_steps -= k - 1;
  g_array_free (in_host, TRUE);
  g_ptr_array_unref (in_names);
  g_ptr_array_unref (out_names);
  g_hash_table_unref (made);
}

/* Offers each provider that compiles (claim_group) every run of consecutive steps it claimed. */
static gboolean
plan_group (OwbSession *s, Plan *p, GError **error)
{
  gboolean any = FALSE;
  for (guint i = 0; i < s->providers->len; i++)
    any |= ((OwbProvider *) g_ptr_array_index (s->providers, i))->claim_group != NULL;
  if (!any || p->n_steps == 0)
    return TRUE;
  /* The last step reading each slot (subgraphs' reads count); graph outputs are read after all. */
  int *last_read = g_new (int, MAX (p->n_slots, 1));
  for (guint i = 0; i < p->n_slots; i++)
    last_read[i] = -1;
  for (guint n = 0; n < p->n_steps; n++)
    {
      const Step *st = &p->steps[n];
      for (int i = 0; i < st->node->n_inputs; i++)
        if (st->in_slots[i] >= 0)
          last_read[st->in_slots[i]] = (int) n;
      GHashTable *reads = g_hash_table_new (g_str_hash, g_str_equal);
      add_subgraph_reads (st->node, reads);
      GHashTableIter iter;
      gpointer key;
      g_hash_table_iter_init (&iter, reads);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (slot_get (p, key) >= 0)
          last_read[slot_get (p, key)] = (int) n;
      g_hash_table_unref (reads);
    }
  for (guint i = 0; i < p->graph->outputs->len; i++)
    if (p->output_slots[i] >= 0)
      last_read[p->output_slots[i]] = G_MAXINT;
  /* From the end, so that replacing a run leaves the indices before it as they were. */
  gboolean ok = TRUE;
  for (guint end = p->n_steps; ok && end > 0;)
    {
      OwbProvider *provider = p->steps[end - 1].provider;
      if (!provider || !provider->claim_group || !groupable (&p->steps[end - 1], provider))
        {
          end--;
          continue;
        }
      guint start = end - 1;
      while (start > 0 && groupable (&p->steps[start - 1], provider))
        start--;
      guint n = end - start;
      OwbNode **nodes = g_new (OwbNode *, n);
      OwbKernelChoice *choices = g_new (OwbKernelChoice, n);
      for (guint i = 0; i < n; i++)
        {
          nodes[i] = p->steps[start + i].node;
          choices[i] = p->steps[start + i].choice;
        }
      OwbGroupChoice group = { 0 };
      char *reason = NULL;
      if (provider->claim_group (provider, p->graph, nodes, choices, n, &group, &reason, error))
        {
          if (group.n_nodes >= 1 && group.first + group.n_nodes <= n)
            group_steps (s, p, start + group.first, group.n_nodes, &group.choice, last_read);
          else
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                           "provider %s took nodes %u..%u of a group of %u", provider->name, group.first,
                           group.first + group.n_nodes, n);
              ok = FALSE;
            }
        }
      else if (error && *error)
        ok = FALSE;
      g_free (reason);
      g_free (nodes);
      g_free (choices);
      end = start;
    }
  g_free (last_read);
  return ok;
}

/* The kernel of the Memcpy nodes the session inserts: the executor made the output where it
 * belongs (host or device), so this copies bytes, wherever they are. */
static gboolean
compute_memcpy (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  if (!ctx->outputs[0] && !owb_kernel_context_new_output (ctx, 0, in->dtype, in->rank, in->dims, error))
    return FALSE;
  GError *local = NULL;
  if (!owb_tensor_copy_into (ctx->outputs[0], in, &local))
    {
      owb_kernel_set_error (ctx, error, local->code, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  return TRUE;
}

static const OwbKernelDef memcpy_to_host = {
  .op_type = "MemcpyToHost", .domain = OWB_DOMAIN, .since = 1, .compute = compute_memcpy, .host_outputs = 1,
};
static const OwbKernelDef memcpy_from_host = {
  .op_type = "MemcpyFromHost", .domain = OWB_DOMAIN, .since = 1, .compute = compute_memcpy, .host_inputs = 1,
};

static OwbProvider *
provider_of_device (const OwbSession *s, const OwbDevice *device)
{
  for (guint p = 0; p < s->providers->len; p++)
    {
      OwbProvider *provider = g_ptr_array_index (s->providers, p);
      if (provider->device == device)
        return provider;
    }
  return NULL;
}

/* What copy insertion keeps while it walks a plan. */
typedef struct {
  OwbSession *s;
  Plan *p;
  GPtrArray *loc;       /* per slot: OwbDevice * where its value is made (NULL: host) */
  GPtrArray *names;     /* per slot: its current name (borrowed) */
  GHashTable *copies;   /* "slot/device index" -> copy's slot + 1 */
  GHashTable *types;    /* name -> OwbValueType *, of the graph */
  GArray *uploaded;     /* int: constant slots that have a copy on a device */
  GArray *steps;        /* Step: the new order */
  GPtrArray *nodes;     /* OwbNode *: the graph's new order */
} Copier;

static int
copier_new_slot (Copier *c, const char *name, OwbDevice *where)
{
  int slot = slot_define (c->p, name);
  g_ptr_array_set_size (c->loc, c->p->n_slots);
  g_ptr_array_set_size (c->names, c->p->n_slots);
  c->loc->pdata[slot] = where;
  c->names->pdata[slot] = (gpointer) name;
  c->p->constants = g_renew (OwbTensor *, c->p->constants, c->p->n_slots);
  c->p->constants[slot] = NULL;
  return slot;
}

/* A name for a copy of `name` in `where`'s memory that the graph does not use yet. */
static char *
copier_fresh_name (Copier *c, const char *name, const OwbDevice *where)
{
  char *fresh = g_strdup_printf ("%s@%s", name, owb_device_get_name (where));
  for (int k = 2; slot_get (c->p, fresh) >= 0; k++)
    {
      g_free (fresh);
      fresh = g_strdup_printf ("%s@%s%d", name, owb_device_get_name (where), k);
    }
  return fresh;
}

static char *
copy_key (int slot, const OwbDevice *where, const OwbSession *s)
{
  return g_strdup_printf ("%d/%u", slot, device_index (s, where));
}

static void
copier_add_type (Copier *c, const char *from, const char *to)
{
  const OwbValueType *t = lookup_type (c->types, from);
  if (t)
    g_ptr_array_add (c->p->graph->value_infos, owb_value_info_new (to, t));
}

/* A MemcpyToHost / MemcpyFromHost node reading slot `from` and making a copy of it in `where`,
 * appended to the new order; returns the copy's slot. `out_name` (taken) names the copy. */
static int
copier_add_copy (Copier *c, int from, OwbDevice *where, char *out_name)
{
  OwbDevice *source = c->loc->pdata[from];
  const char *from_name = c->names->pdata[from];
  const char *op = where ? "MemcpyFromHost" : "MemcpyToHost";
  g_autofree char *name = g_strdup_printf ("%s_%s", op, from_name);
  OwbNode *node = owb_node_new (op, OWB_DOMAIN, name);
  owb_node_add_input (node, from_name);
  owb_node_add_output (node, out_name);
  g_free (out_name);
  node->opset = 1;
  node->graph = c->p->graph;
  OwbDevice *device = where ? where : source;
  OwbProvider *provider = provider_of_device (c->s, device);
  node->provider = g_strdup (provider ? provider->name : owb_device_get_name (device));
  g_ptr_array_add (c->nodes, node);
  copier_add_type (c, from_name, node->outputs[0]);

  Step step = { 0 };
  step.node = node;
  step.schema = owb_op_schema_lookup (OWB_DOMAIN, node->op_type, 1);
  step.provider = provider;
  step.is_copy = TRUE;
  step.choice.def = where ? &memcpy_from_host : &memcpy_to_host;
  step.device = device;
  step.device_index = device_index (c->s, device);
  step.host_in = where ? 1 : 0;
  step.host_out = where ? 0 : 1;
  step.in_slots = g_new (int, 1);
  step.out_slots = g_new (int, 1);
  step.in_slots[0] = from;
  step.out_slots[0] = copier_new_slot (c, node->outputs[0], where);
  g_array_append_val (c->steps, step);
  g_hash_table_insert (c->copies, copy_key (from, where, c->s), GINT_TO_POINTER (step.out_slots[0] + 1));
  return step.out_slots[0];
}

/* Renames a node's input or output. The old string may be a key of the plan's tables (or of a
 * subgraph's outer names), so the plan keeps it until it goes. */
static void
set_string (Plan *p, char **field, const char *value)
{
  if (strcmp (*field, value) != 0)
    {
      g_ptr_array_add (p->owned_names, *field);
      *field = g_strdup (value);
    }
}

/* The slot holding slot's value in `where`'s memory: itself, an uploaded constant, or a copy made
 * by a Memcpy node (one per value and place, shared by every reader after it). */
static gboolean
copier_resolve (Copier *c, int slot, OwbDevice *where, int *out, GError **error)
{
  if (c->loc->pdata[slot] == where)
    {
      *out = slot;
      return TRUE;
    }
  g_autofree char *key = copy_key (slot, where, c->s);
  int found = GPOINTER_TO_INT (g_hash_table_lookup (c->copies, key)) - 1;
  if (found >= 0)
    {
      *out = found;
      return TRUE;
    }
  OwbTensor *constant = c->p->constants[slot];
  if (constant && where)
    {
      /* Constants go to the device once, when the session is made. */
      OwbTensor *copy = owb_tensor_copy_to_device (constant, where, error);
      if (!copy)
        {
          g_prefix_error (error, "initializer '%s' to %s: ", (const char *) c->names->pdata[slot], where->name);
          return FALSE;
        }
      char *name = copier_fresh_name (c, c->names->pdata[slot], where);
      g_ptr_array_add (c->p->owned_names, name);
      g_ptr_array_add (c->p->owned_tensors, copy);
      int up = copier_new_slot (c, name, where);
      c->p->constants[up] = copy;
      g_hash_table_insert (c->copies, g_steal_pointer (&key), GINT_TO_POINTER (up + 1));
      g_array_append_val (c->uploaded, slot);
      *out = up;
      return TRUE;
    }
  *out = copier_add_copy (c, slot, where, copier_fresh_name (c, c->names->pdata[slot], where));
  return TRUE;
}

/* A session that owns its model frees the host storage of weights that only device kernels read
 * (they have their uploaded copy), as it does for weights a CPU kernel packed: else each would be
 * in memory twice. Not where a host step, a subgraph or the caller reads it, or it is an output. */
static void
release_uploaded (Plan *p, GArray *uploaded)
{
  if (uploaded->len == 0)
    return;
  gboolean *read = g_new0 (gboolean, MAX (p->n_slots, 1));
  GHashTable *names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; n < p->n_steps; n++)
    {
      const Step *st = &p->steps[n];
      for (int i = 0; i < st->node->n_inputs; i++)
        if (st->in_slots[i] >= 0)
          read[st->in_slots[i]] = TRUE;
      add_subgraph_reads (st->node, names);
    }
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (slot_get (p, key) >= 0)
      read[slot_get (p, key)] = TRUE;
  g_hash_table_unref (names);
  for (guint i = 0; i < p->graph->outputs->len; i++)
    if (p->output_slots[i] >= 0)
      read[p->output_slots[i]] = TRUE;
  for (guint k = 0; k < uploaded->len; k++)
    {
      int slot = g_array_index (uploaded, int, k);
      OwbTensor *t = p->constants[slot];
      if (!read[slot] && t && t->data && !t->device && t->kind == OWB_VALUE_TENSOR && t->dtype != OWB_TYPE_STRING
          && g_atomic_int_get (&t->ref_count) == 1)
        _owb_tensor_release_storage (t);
    }
  g_free (read);
}

/* After partitioning: makes every value a step reads be in the memory where the step reads it, by
 * uploading constants and inserting Memcpy nodes, into the plan and into the session's graph. A
 * graph output made on a device is renamed (x@cuda) and a MemcpyToHost makes x. Nothing changes
 * where every step is on the host. */
static gboolean
plan_insert_copies (OwbSession *s, Plan *p, GError **error)
{
  gboolean any = FALSE;
  for (guint n = 0; n < p->n_steps && !any; n++)
    any = p->steps[n].device != NULL;
  if (!any)
    return TRUE;
  OwbGraph *graph = p->graph;
  Copier c = { s, p };
  c.loc = g_ptr_array_new ();
  c.names = g_ptr_array_new ();
  g_ptr_array_set_size (c.loc, p->n_slots);
  g_ptr_array_set_size (c.names, p->n_slots);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, p->slot_of);
  while (g_hash_table_iter_next (&iter, &key, &value))
    c.names->pdata[GPOINTER_TO_INT (value) - 1] = key;
  for (guint n = 0; n < p->n_steps; n++)
    for (int o = 0; o < p->steps[n].node->n_outputs; o++)
      if (p->steps[n].out_slots[o] >= 0)
        c.loc->pdata[p->steps[n].out_slots[o]] = step_output_device (&p->steps[n], o);
  c.copies = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  c.types = collect_types (graph);
  c.steps = g_array_sized_new (FALSE, TRUE, sizeof (Step), p->n_steps);
  c.nodes = g_ptr_array_new ();
  c.uploaded = g_array_new (FALSE, FALSE, sizeof (int));
  gboolean *is_output = g_new0 (gboolean, MAX (p->n_slots, 1));
  for (guint i = 0; i < graph->outputs->len; i++)
    if (p->output_slots[i] >= 0)
      is_output[p->output_slots[i]] = TRUE;
  guint n_first_slots = p->n_slots;
  gboolean ok = TRUE;
  for (guint n = 0; ok && n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      OwbNode *node = step->node;
      for (int i = 0; ok && i < node->n_inputs; i++)
        {
          int slot = step->in_slots[i];
          if (slot < 0)
            continue;
          ok = copier_resolve (&c, slot, step_input_device (step, i), &step->in_slots[i], error);
          if (ok)
            set_string (p, &node->inputs[i], c.names->pdata[step->in_slots[i]]);
        }
      g_ptr_array_add (c.nodes, node);
      g_array_append_val (c.steps, *step);
      /* A graph output made on a device: the device value takes a new name, and the copy the
       * graph's. */
      for (int o = 0; ok && o < node->n_outputs; o++)
        {
          int slot = step->out_slots[o];
          if (slot < 0 || (guint) slot >= n_first_slots || !is_output[slot] || !c.loc->pdata[slot])
            continue;
          OwbDevice *where = c.loc->pdata[slot];
          char *host_name = g_strdup (node->outputs[o]);
          char *device_name = copier_fresh_name (&c, host_name, where);
          g_hash_table_remove (p->slot_of, host_name);
          g_ptr_array_add (p->owned_names, node->outputs[o]);
          node->outputs[o] = device_name;
          g_hash_table_insert (p->slot_of, device_name, GINT_TO_POINTER (slot + 1));
          c.names->pdata[slot] = device_name;
          copier_add_type (&c, host_name, device_name);
          int host = copier_add_copy (&c, slot, NULL, host_name);
          for (guint k = 0; k < graph->outputs->len; k++)
            if (p->output_slots[k] == slot)
              p->output_slots[k] = host;
        }
    }
  g_free (is_output);
  if (ok)
    {
      g_free (p->steps);
      p->n_steps = c.steps->len;
      p->steps = (Step *) g_array_free (c.steps, FALSE);
      /* The graph owns its nodes: swap the array's contents, keeping the free function. */
      g_ptr_array_set_free_func (graph->nodes, NULL);
      g_ptr_array_set_size (graph->nodes, 0);
      for (guint n = 0; n < c.nodes->len; n++)
        g_ptr_array_add (graph->nodes, g_ptr_array_index (c.nodes, n));
      g_ptr_array_set_free_func (graph->nodes, (GDestroyNotify) owb_node_free);
      g_ptr_array_unref (c.nodes);
      if (s->owns_model && p->path[0] == '\0')
        release_uploaded (p, c.uploaded);
    }
  else
    {
      /* The copy steps made so far are not in p->steps: free them and their nodes here (the
       * plan goes right after, so its table may keep their names as dangling keys unread). */
      for (guint n = 0; n < c.steps->len; n++)
        {
          Step *st = &g_array_index (c.steps, Step, n);
          if (st->is_copy)
            {
              g_free (st->in_slots);
              g_free (st->out_slots);
              owb_node_free (st->node);
            }
        }
      g_array_free (c.steps, TRUE);
      g_ptr_array_unref (c.nodes);
    }
  g_array_unref (c.uploaded);
  g_hash_table_unref (c.copies);
  g_hash_table_unref (c.types);
  g_ptr_array_unref (c.loc);
  g_ptr_array_unref (c.names);
  return ok;
}

static gboolean
is_graph_input (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->inputs->len; i++)
    if (strcmp (((const OwbValueInfo *) g_ptr_array_index (g->inputs, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

/* Marks each step's inputs whose value is the same in every run: initializers (the graph's own or,
 * read from an outer scope, an enclosing graph's; not one that is also a graph input, which a
 * caller may feed) and Constant nodes' outputs. A step whose
 * inference read only such values keeps its memo (Reshape to a constant shape, Slice with
 * constant starts: in a Loop body they were inferred again on every iteration). */
static void
mark_fixed_inputs (Plan *p)
{
  gboolean *fixed = g_new0 (gboolean, MAX (p->n_slots, 1));
  for (guint slot = 0; slot < p->n_slots; slot++)
    fixed[slot] = p->constants[slot] != NULL;
  for (guint i = 0; i < p->graph->inputs->len; i++)
    if (p->input_slots[i] >= 0)
      fixed[p->input_slots[i]] = FALSE;
  for (guint k = 0; p->outer_names && p->outer_names[k]; k++)
    for (const OwbGraph *g = p->graph->parent; g; g = g->parent)
      if (owb_graph_get_initializer (g, p->outer_names[k]))
        {
          fixed[p->outer_slots[k]] = !is_graph_input (g, p->outer_names[k]);
          break;
        }
  for (guint n = 0; n < p->n_steps; n++)
    {
      const OwbNode *node = p->steps[n].node;
      if (strcmp (node->op_type, "Constant") == 0 && (!node->domain || !node->domain[0]) && node->n_inputs == 0
          && node->n_outputs == 1 && p->steps[n].out_slots[0] >= 0)
        fixed[p->steps[n].out_slots[0]] = TRUE;
    }
  for (guint n = 0; n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      step->fixed_in = 0;
      for (int i = 0; i < MIN (step->node->n_inputs, 64); i++)
        if (step->in_slots[i] >= 0 && fixed[step->in_slots[i]])
          step->fixed_in |= G_GUINT64_CONSTANT (1) << i;
    }
  g_free (fixed);
}

static Plan *
plan_new (OwbSession *s, OwbGraph *graph, const char *path, int depth, GError **error)
{
  Plan *p = g_new0 (Plan, 1);
  p->graph = graph;
  p->path = g_strdup (path);
  p->owned_names = g_ptr_array_new_with_free_func (g_free);
  p->owned_tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  p->slot_of = g_hash_table_new (g_str_hash, g_str_equal);
  /* Slots: initializers, inputs, values from outer scopes, node outputs. */
  for (guint i = 0; i < graph->initializer_names->len; i++)
    slot_define (p, g_ptr_array_index (graph->initializer_names, i));
  p->input_slots = g_new (int, MAX (graph->inputs->len, 1));
  for (guint i = 0; i < graph->inputs->len; i++)
    p->input_slots[i] = slot_define (p, ((OwbValueInfo *) g_ptr_array_index (graph->inputs, i))->name);
  if (depth > 0)
    {
      GHashTable *outer = g_hash_table_new (g_str_hash, g_str_equal);
      _owb_graph_collect_outer_refs (graph, outer);
      guint n_outer = g_hash_table_size (outer);
      p->outer_names = g_new0 (char *, n_outer + 1);
      p->outer_slots = g_new (int, MAX (n_outer, 1));
      GHashTableIter iter;
      gpointer key;
      guint k = 0;
      g_hash_table_iter_init (&iter, outer);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        {
          p->outer_names[k] = key;
          p->outer_slots[k++] = slot_define (p, key);
        }
      g_hash_table_unref (outer);
    }
  p->n_steps = graph->nodes->len;
  p->steps = g_new0 (Step, MAX (p->n_steps, 1));
  for (guint n = 0; n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      step->node = g_ptr_array_index (graph->nodes, n);
      step->in_slots = g_new (int, MAX (step->node->n_inputs, 1));
      step->out_slots = g_new (int, MAX (step->node->n_outputs, 1));
      for (int i = 0; i < step->node->n_inputs; i++)
        step->in_slots[i] = step->node->inputs[i][0] ? slot_get (p, step->node->inputs[i]) : -1;
      for (int o = 0; o < step->node->n_outputs; o++)
        step->out_slots[o] = step->node->outputs[o][0] ? slot_define (p, step->node->outputs[o]) : -1;
    }
  p->constants = g_new0 (OwbTensor *, MAX (p->n_slots, 1));
  for (guint i = 0; i < graph->initializers->len; i++)
    p->constants[slot_get (p, g_ptr_array_index (graph->initializer_names, i))] = g_ptr_array_index (graph->initializers, i);
  p->output_slots = g_new (int, MAX (graph->outputs->len, 1));
  for (guint i = 0; i < graph->outputs->len; i++)
    p->output_slots[i] = slot_get (p, ((OwbValueInfo *) g_ptr_array_index (graph->outputs, i))->name);

  /* Kernels: schema and provider per node; then the node's subgraphs. */
  HeldConstants held = { NULL, NULL, NULL };
  if (depth == 0 && s->owns_model)
    held_constants_init (&held, p);
  GHashTable *types = collect_types (graph);
  for (guint n = 0; n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      OwbNode *node = step->node;
      if (node->opset <= 0)
        node->opset = (int) owb_model_get_opset (s->model, node->domain);
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
          held_constants_clear (&held);
          plan_free (p);
          return NULL;
        }
      if (!partition_step (s, step, types, error) || !plan_subgraphs (s, p, n, node, depth, error))
        {
          g_hash_table_unref (types);
          held_constants_clear (&held);
          plan_free (p);
          return NULL;
        }
      if (held.remaining)
        held_constants_step (&held, p, step);
    }
  g_hash_table_unref (types);
  held_constants_clear (&held);
  if (!plan_group (s, p, error) || !plan_insert_copies (s, p, error))
    {
      plan_free (p);
      return NULL;
    }

  /* Lifetimes: each slot is released after its last reader (subgraphs' implicit reads count);
   * graph outputs and constants never are. */
  int *last = g_new (int, MAX (p->n_slots, 1));
  for (guint i = 0; i < p->n_slots; i++)
    last[i] = -1;
  for (guint n = 0; n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      for (int o = 0; o < step->node->n_outputs; o++)
        if (step->out_slots[o] >= 0)
          last[step->out_slots[o]] = (int) n;
      for (int i = 0; i < step->node->n_inputs; i++)
        if (step->in_slots[i] >= 0)
          last[step->in_slots[i]] = (int) n;
      GHashTable *reads = g_hash_table_new (g_str_hash, g_str_equal);
      add_subgraph_reads (step->node, reads);
      GHashTableIter iter;
      gpointer key;
      g_hash_table_iter_init (&iter, reads);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        {
          int slot = slot_get (p, key);
          if (slot >= 0)
            last[slot] = (int) n;
        }
      g_hash_table_unref (reads);
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    if (p->output_slots[i] >= 0)
      last[p->output_slots[i]] = -1;
  for (guint slot = 0; slot < p->n_slots; slot++)
    if (p->constants[slot])
      last[slot] = -1;
  /* Each step's release list, by counting (a scan of every slot per step was quadratic: 50,000
   * nodes took seconds). Slots stay in increasing order within a list. */
  int *n_released = g_new0 (int, MAX (p->n_steps, 1));
  for (guint slot = 0; slot < p->n_slots; slot++)
    if (last[slot] >= 0)
      n_released[last[slot]]++;
  for (guint n = 0; n < p->n_steps; n++)
    {
      p->steps[n].release = g_new (int, n_released[n] + 1);
      p->steps[n].release[n_released[n]] = -1;
      n_released[n] = 0;
    }
  for (guint slot = 0; slot < p->n_slots; slot++)
    if (last[slot] >= 0)
      {
        int n = last[slot];
        p->steps[n].release[n_released[n]++] = (int) slot;
      }
  g_free (n_released);
  g_free (last);
  mark_fixed_inputs (p);
  p->memo_base = s->n_memos;
  s->n_memos += p->n_steps;
  return p;
}

static void
plan_free (Plan *p)
{
  if (!p)
    return;
  for (guint n = 0; n < p->n_steps; n++)
    {
      Step *step = &p->steps[n];
      if (step->claimed && !step->is_copy && step->provider->release)
        step->provider->release (step->provider, &step->choice);
      for (guint m = 0; m < step->n_members; m++)
        {
          Step *member = &step->members[m];
          if (step->provider->release)
            step->provider->release (step->provider, &member->choice);
          g_free (member->in_slots);
          g_free (member->out_slots);
        }
      g_free (step->members);
      g_free (step->in_slots);
      g_free (step->out_slots);
      g_free (step->release);
    }
  g_free (p->steps);
  g_free (p->constants);
  g_free (p->input_slots);
  g_free (p->output_slots);
  g_free (p->outer_names);
  g_free (p->outer_slots);
  g_free (p->path);
  g_hash_table_unref (p->slot_of);
  g_ptr_array_unref (p->owned_tensors);
  g_ptr_array_unref (p->owned_names);
  g_free (p);
}

static OwbSession *
session_new (OwbModel *model, gboolean take, const OwbSessionOptions *options, GError **error)
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
      if (take)
        owb_model_unref (model);
      return NULL;
    }
  OwbSession *s = g_new0 (OwbSession, 1);
  g_mutex_init (&s->contexts_lock);
  s->run_contexts = g_ptr_array_new_with_free_func ((GDestroyNotify) run_context_free);
  s->providers = g_ptr_array_ref (options->providers);
  s->devices = g_ptr_array_new ();
  g_ptr_array_add (s->devices, NULL);
  for (guint i = 0; i < s->providers->len; i++)
    {
      OwbDevice *device = ((OwbProvider *) g_ptr_array_index (s->providers, i))->device;
      if (device && !g_ptr_array_find (s->devices, device, NULL))
        g_ptr_array_add (s->devices, device);
    }
  s->model = owb_model_dup (model);
  /* the copy holds its own references to the tensors: the caller's go now */
  if (take)
    owb_model_unref (model);
  s->owns_model = take;
  s->plans = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) plan_free);
  if (options->hooks && (options->hooks->node_begin || options->hooks->node_end))
    {
      s->hooks = *options->hooks;
      s->has_hooks = TRUE;
    }
  s->memory_limit = options->memory_limit;
  /* The optimizer infers types first thing: once is enough. */
  if (options->optimize == OWB_OPTIMIZE_DISABLED && !owb_model_infer_shapes (s->model, error))
    goto fail;
  if (options->optimize != OWB_OPTIMIZE_DISABLED)
    {
      OwbOptimizeOptions oo;
      owb_optimize_options_init (&oo);
      oo.level = options->optimize;
      oo.providers = options->providers;
      oo.disabled_passes = options->disabled_passes;
      if (!owb_model_optimize (s->model, &oo, &s->optimize_report, error))
        goto fail;
    }
  OwbGraph *graph = s->model->graph;
  s->main = plan_new (s, graph, "", 0, error);
  if (!s->main)
    goto fail;
  s->inputs = g_ptr_array_new ();
  s->input_info = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->inputs, i);
      g_hash_table_insert (s->input_info, info->name, info); /* the last of a repeated name, as before */
      if (!owb_graph_get_initializer (graph, info->name))
        g_ptr_array_add (s->inputs, info);
    }
  s->outputs = g_ptr_array_new ();
  for (guint i = 0; i < graph->outputs->len; i++)
    g_ptr_array_add (s->outputs, g_ptr_array_index (graph->outputs, i));
  s->pool = owb_thread_pool_new (options->n_threads > 0 ? options->n_threads : (int) g_get_num_processors ());
  return s;

fail:
  owb_session_free (s);
  return NULL;
}

OwbSession *
owb_session_new (OwbModel *model, const OwbSessionOptions *options, GError **error)
{
  return session_new (model, FALSE, options, error);
}

OwbSession *
owb_session_new_take (OwbModel *model, const OwbSessionOptions *options, GError **error)
{
  return session_new (model, TRUE, options, error);
}

void
owb_session_free (OwbSession *s)
{
  if (!s)
    return;
  plan_free (s->main);
  g_hash_table_unref (s->plans);
  owb_optimize_report_free (s->optimize_report);
  if (s->inputs)
    g_ptr_array_unref (s->inputs);
  if (s->input_info)
    g_hash_table_unref (s->input_info);
  if (s->outputs)
    g_ptr_array_unref (s->outputs);
  owb_thread_pool_free (s->pool);
  owb_model_unref (s->model);
  g_ptr_array_unref (s->run_contexts);
  g_ptr_array_unref (s->providers);
  g_ptr_array_unref (s->devices);
  g_mutex_clear (&s->contexts_lock);
  g_free (s);
}

const OwbOptimizeReport *
owb_session_get_optimize_report (const OwbSession *s)
{
  return s->optimize_report;
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

typedef struct _RunState RunState;
struct _RunState {
  OwbSession *session;
  const Plan *plan;
  OwbTensor **values; /* per slot of plan */
  OwbArena *arena;    /* host memory, shared by a run and its subgraph runs */
  OwbArena **arenas;  /* per device of the session ([0] is arena) */
  guint *unplanned_copies; /* the main run's count */
  InferMemo *memos;   /* per step of plan */
  InferMemo *memo_root; /* the run context's, for every plan */
  guint *n_inferred;  /* the main run's count of steps inferred at run time */
  const RunState *parent;
  GCancellable *cancellable;
  const OwbRunHooks *trace; /* the run's own hooks, or NULL */
  int depth;
};

static RunState *
run_state_init (RunState *rs, OwbSession *s, const Plan *plan, OwbArena **arenas, guint *unplanned_copies,
                const RunState *parent, GCancellable *cancellable)
{
  rs->session = s;
  rs->plan = plan;
  rs->values = g_new0 (OwbTensor *, MAX (plan->n_slots, 1));
  rs->arena = arenas[0];
  rs->arenas = arenas;
  rs->unplanned_copies = unplanned_copies;
  rs->memo_root = parent ? parent->memo_root : NULL;
  rs->n_inferred = parent ? parent->n_inferred : NULL;
  rs->memos = rs->memo_root ? rs->memo_root + plan->memo_base : NULL;
  rs->parent = parent;
  rs->cancellable = cancellable;
  rs->trace = parent ? parent->trace : NULL;
  rs->depth = parent ? parent->depth + 1 : 0;
  for (guint slot = 0; slot < plan->n_slots; slot++)
    if (plan->constants[slot])
      rs->values[slot] = owb_tensor_ref (plan->constants[slot]);
  return rs;
}

static void
run_state_clear (RunState *rs)
{
  for (guint slot = 0; slot < rs->plan->n_slots; slot++)
    owb_tensor_unref (rs->values[slot]);
  g_free (rs->values);
}

/* The step's inputs are plain tensors of the element types and dims the memo was made for (a type
 * or shape may change between runs where the graph leaves dims symbolic). Read from the tensors
 * themselves: building their value types first cost more than the rest of a tiny node's step. */
static gboolean
memo_matches (const InferMemo *memo, OwbTensor *const *inputs, int n_in)
{
  for (int i = 0; i < n_in; i++)
    {
      const OwbTensor *t = inputs[i];
      const OwbValueType *m = &memo->in_types[i];
      if (!t)
        continue;
      if (t->kind != OWB_VALUE_TENSOR || m->kind != OWB_VALUE_TENSOR || t->dtype != m->dtype || t->rank != m->rank)
        return FALSE;
      for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != m->dims[d].value)
          return FALSE;
    }
  return TRUE;
}

/* Keeps what inference gave, if it depends on the input types alone (reusable) and those are plain
 * tensors; forgets the memo otherwise. */
static void
memo_store (InferMemo *memo, const OwbValueType *const *in_types, int n_in, const OwbValueType *out_types, int n_out,
            gboolean reusable)
{
  memo->valid = FALSE;
  if (!reusable)
    return;
  for (int i = 0; i < n_in; i++)
    if (in_types[i] && in_types[i]->kind != OWB_VALUE_TENSOR)
      return;
  for (int o = 0; o < n_out; o++)
    if (out_types[o].kind != OWB_VALUE_TENSOR)
      return;
  if (!memo->in_types)
    memo->in_types = g_new0 (OwbValueType, MAX (n_in, 1));
  if (!memo->out_types)
    memo->out_types = g_new0 (OwbValueType, MAX (n_out, 1));
  for (int i = 0; i < n_in; i++)
    if (in_types[i])
      memo->in_types[i] = *in_types[i];
  memcpy (memo->out_types, out_types, n_out * sizeof *out_types);
  memo->valid = TRUE;
}

/* A node's kernel under the run's own hooks: its times, the workers that helped it and the
 * arena's bytes after it. Off the untraced path, which only tests rs->trace. */
static gboolean
compute_traced (RunState *rs, const Step *step, guint index, OwbKernelContext *kctx, GError **error)
{
  OwbSession *s = rs->session;
  const OwbRunHooks *hooks = rs->trace;
  int n_threads = owb_thread_pool_get_n_threads (s->pool);
  enum { FEW = 16 };
  _OwbWorkerTrace traces_few[FEW];
  OwbWorkerSpan spans_few[FEW];
  _OwbWorkerTrace *traces = n_threads <= FEW ? traces_few : g_new (_OwbWorkerTrace, n_threads);
  OwbWorkerSpan *spans = n_threads <= FEW ? spans_few : g_new (OwbWorkerSpan, n_threads);
  memset (traces, 0, n_threads * sizeof *traces);
  OwbNodeEvent ev = {
    .node = step->node,
    .node_index = (int) index,
    .graph_path = rs->plan->path,
    .depth = rs->depth,
    .op_type = step->node->op_type,
    .provider = step->provider ? step->provider->name : step->node->provider,
    .thread = 0,
    .inputs = kctx->inputs,
    .n_inputs = kctx->n_inputs,
    .n_outputs = kctx->n_outputs,
    .arena_bytes = _owb_arena_get_in_use (rs->arena),
  };
  if (s->has_hooks && s->hooks.node_begin)
    s->hooks.node_begin (step->node, (int) index, s->hooks.user_data);
  ev.start_ns = _owb_now_ns ();
  if (hooks->node_begin)
    hooks->node_begin (&ev, hooks->user_data);
  _OwbWorkerTrace *outer = _owb_thread_pool_swap_trace (traces);
  /* the clock is read again after the hook, so that its own time is not the node's */
  ev.start_ns = _owb_now_ns ();
  gboolean ok = step->choice.def->compute (kctx, error);
  ev.end_ns = _owb_now_ns ();
  _owb_thread_pool_swap_trace (outer);
  for (int t = 1; t < n_threads; t++)
    if (traces[t].start_ns)
      spans[ev.n_workers++] = (OwbWorkerSpan){ t, traces[t].start_ns, traces[t].end_ns, traces[t].busy_ns };
  ev.workers = spans;
  ev.outputs = kctx->outputs;
  ev.arena_bytes = _owb_arena_get_in_use (rs->arena);
  if (hooks->node_end)
    hooks->node_end (&ev, hooks->user_data);
  if (s->has_hooks && s->hooks.node_end)
    s->hooks.node_end (step->node, (int) index, kctx->outputs, kctx->n_outputs, s->hooks.user_data);
  if (n_threads > FEW)
    {
      g_free (traces);
      g_free (spans);
    }
  return ok;
}

static gboolean
run_step (RunState *rs, guint index, GError **error)
{
  OwbSession *s = rs->session;
  const Step *step = &rs->plan->steps[index];
  OwbNode *node = step->node;
  int n_in = node->n_inputs, n_out = node->n_outputs;
  /* On the stack for the usual few inputs and outputs; on the heap for a node with very many. */
  enum { FEW = 8 };
  OwbTensor *inputs_few[FEW], *outputs_few[FEW];
  OwbValueType in_types_few[FEW], out_types_few[FEW];
  const OwbValueType *in_type_ptrs_few[FEW];
  gboolean wanted_few[FEW];
  gboolean few_in = n_in <= FEW, few_out = n_out <= FEW;
  OwbTensor **inputs = few_in ? inputs_few : g_new (OwbTensor *, n_in);
  OwbValueType *in_types = few_in ? in_types_few : g_new (OwbValueType, n_in);
  const OwbValueType **in_type_ptrs = few_in ? in_type_ptrs_few : g_new (const OwbValueType *, n_in);
  OwbValueType *out_types = few_out ? out_types_few : g_new (OwbValueType, n_out);
  OwbTensor **outputs = few_out ? outputs_few : g_new (OwbTensor *, n_out);
  gboolean *wanted = few_out ? wanted_few : g_new (gboolean, n_out);
  OwbTensor **converted = NULL;
  OwbTensor **moved = NULL;          /* inputs copied to where the step reads them */
  const OwbTensor **host_values = NULL;
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
    }
  /* Values in the wrong memory for this step (read across a subgraph boundary; the plan's Memcpy
   * nodes cover the rest) are copied here. */
  for (int i = 0; !step->is_copy && i < n_in; i++)
    {
      OwbDevice *where = step_input_device (step, i);
      if (!inputs[i] || inputs[i]->kind != OWB_VALUE_TENSOR || inputs[i]->device == where)
        continue;
      if (!moved)
        moved = g_new0 (OwbTensor *, n_in);
      moved[i] = _owb_arena_new_tensor (rs->arenas[where ? device_index (s, where) : 0], inputs[i]->dtype,
                                        inputs[i]->rank, inputs[i]->dims, error);
      if (!moved[i] || !owb_tensor_copy_into (moved[i], inputs[i], error))
        {
          char *who = owb_node_describe (node);
          g_prefix_error (error, "%s: input '%s' to %s: ", who, node->inputs[i], owb_device_get_name (where));
          g_free (who);
          ok = FALSE;
          goto out;
        }
      inputs[i] = moved[i];
      (*rs->unplanned_copies)++;
    }
  /* Inference reads values on the host only (shape inputs are there); a device value is unknown to
   * it, as a non-constant is when the session is made. */
  const OwbTensor *const *infer_values = (const OwbTensor *const *) inputs;
  if (step->device)
    {
      host_values = g_new0 (const OwbTensor *, MAX (n_in, 1));
      for (int i = 0; i < n_in; i++)
        host_values[i] = inputs[i] && !inputs[i]->device ? inputs[i] : NULL;
      infer_values = host_values;
    }
  InferMemo *memo = rs->memos ? &rs->memos[index] : NULL;
  if (memo && memo->valid && memo_matches (memo, inputs, n_in))
    memcpy (out_types, memo->out_types, n_out * sizeof *out_types);
  else
    {
      /* The inputs' types, only now that inference needs them (hundreds of bytes each). */
      for (int i = 0; i < n_in; i++)
        if (inputs[i])
          {
            owb_tensor_get_value_type (inputs[i], &in_types[i]);
            in_type_ptrs[i] = &in_types[i];
          }
      OwbInferContext ictx = {
        .node = node,
        .opset = node->opset,
        .n_inputs = n_in,
        .inputs = in_type_ptrs,
        .input_values = infer_values,
        .n_outputs = n_out,
        .outputs = out_types,
        .graph = node->graph,
      };
      if (!owb_op_infer (step->schema, &ictx, error))
        {
          ok = FALSE;
          goto out;
        }
      if (rs->n_inferred)
        (*rs->n_inferred)++;
      if (memo)
        memo_store (memo, in_type_ptrs, n_in, out_types, n_out,
                    !ictx.values_read || (ictx.values_read_inputs & ~step->fixed_in) == 0);
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
      OwbDevice *where = step_output_device (step, o);
      outputs[o] = _owb_arena_new_tensor (where ? rs->arenas[step->device_index] : rs->arena, dtype, t->rank, dims,
                                          error);
      if (!outputs[o])
        {
          char *who = owb_node_describe (node);
          g_prefix_error (error, "%s: output '%s': ", who, node->outputs[o]);
          g_free (who);
          ok = FALSE;
        }
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
        .device = step->device,
        .host_outputs = step->host_out,
      };
      if (G_UNLIKELY (rs->trace != NULL))
        ok = compute_traced (rs, step, index, &kctx, error);
      else
        {
          if (s->has_hooks && s->hooks.node_begin)
            s->hooks.node_begin (node, (int) index, s->hooks.user_data);
          ok = step->choice.def->compute (&kctx, error);
          if (s->has_hooks && s->hooks.node_end)
            s->hooks.node_end (node, (int) index, outputs, n_out, s->hooks.user_data);
        }
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
  /* A device kernel makes its outputs in its device's memory (the contract in owb-provider.h). */
  for (int o = 0; ok && o < n_out; o++)
    if (outputs[o] && outputs[o]->kind == OWB_VALUE_TENSOR && outputs[o]->device != step_output_device (step, o))
      {
        char *who = owb_node_describe (node);
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                     "%s: the %s kernel made output '%s' in %s memory, not in %s memory", who,
                     step->provider ? step->provider->name : "session", node->outputs[o],
                     owb_device_get_name (outputs[o]->device), owb_device_get_name (step_output_device (step, o)));
        g_free (who);
        ok = FALSE;
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
  if (moved)
    {
      for (int i = 0; i < n_in; i++)
        owb_tensor_unref (moved[i]);
      g_free (moved);
    }
  g_free (host_values);
  if (!few_in)
    {
      g_free (inputs);
      g_free (in_types);
      g_free (in_type_ptrs);
    }
  if (!few_out)
    {
      g_free (out_types);
      g_free (outputs);
      g_free (wanted);
    }
  g_free (converted);
  return ok;
}

static gboolean
run_plan (RunState *rs, guint *n_run, GError **error)
{
  for (guint n = 0; n < rs->plan->n_steps; n++)
    {
      if (g_cancellable_set_error_if_cancelled (rs->cancellable, error))
        return FALSE;
      if (!run_step (rs, n, error))
        return FALSE;
      if (n_run)
        (*n_run)++;
    }
  return TRUE;
}

/* A new reference to v in host memory: v itself, or a copy of a device value. */
static OwbTensor *
value_to_host (const RunState *rs, OwbTensor *v, GError **error)
{
  if (!v->device)
    return owb_tensor_ref (v);
  OwbTensor *host = _owb_arena_new_tensor (rs->arena, v->dtype, v->rank, v->dims, error);
  if (host && !owb_tensor_copy_into (host, v, error))
    g_clear_pointer (&host, owb_tensor_unref);
  if (host)
    (*rs->unplanned_copies)++;
  return host;
}

static OwbTensor *
lookup_outer (const RunState *rs, const char *name)
{
  for (; rs; rs = rs->parent)
    {
      int slot = slot_get (rs->plan, name);
      if (slot >= 0 && rs->values[slot])
        return rs->values[slot];
    }
  return NULL;
}

gboolean
owb_kernel_context_check_interrupt (OwbKernelContext *ctx, gsize held, GError **error)
{
  const RunState *rs = ctx->run_data;
  if (rs == NULL)
    return TRUE;
  GError *local = NULL;
  if (g_cancellable_set_error_if_cancelled (rs->cancellable, &local))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_CANCELLED, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  if (!_owb_arena_check_limit (rs->arena, held, &local))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  return TRUE;
}

gboolean
owb_kernel_context_run_subgraph (OwbKernelContext *ctx, const OwbGraph *graph, guint n_inputs,
                                 OwbTensor *const *inputs, OwbTensor **outputs, GError **error)
{
  const RunState *parent = ctx->run_data;
  g_return_val_if_fail (parent != NULL, FALSE);
  const Plan *plan = g_hash_table_lookup (parent->session->plans, graph);
  if (!plan)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "graph '%s' is not a subgraph of this node",
                            graph->name ? graph->name : "");
      return FALSE;
    }
  if (n_inputs > graph->inputs->len)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "subgraph '%s' takes %u inputs, %u given",
                            graph->name ? graph->name : "", graph->inputs->len, n_inputs);
      return FALSE;
    }
  RunState rs;
  run_state_init (&rs, parent->session, plan, parent->arenas, parent->unplanned_copies, parent, parent->cancellable);
  gboolean ok = TRUE;
  for (guint i = 0; i < n_inputs; i++)
    {
      owb_tensor_unref (rs.values[plan->input_slots[i]]);
      rs.values[plan->input_slots[i]] = inputs[i] ? owb_tensor_ref (inputs[i]) : NULL;
    }
  for (guint k = 0; plan->outer_names && plan->outer_names[k]; k++)
    {
      OwbTensor *v = lookup_outer (parent, plan->outer_names[k]);
      /* Names the subgraph defines itself never reach here; an unresolved one is an optional
       * value that an enclosing graph left empty, and the reading node reports it. */
      if (v && !rs.values[plan->outer_slots[k]])
        rs.values[plan->outer_slots[k]] = owb_tensor_ref (v);
    }
  for (guint i = n_inputs; ok && i < graph->inputs->len; i++)
    if (!rs.values[plan->input_slots[i]])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "subgraph input '%s' was not given",
                              ((OwbValueInfo *) g_ptr_array_index (graph->inputs, i))->name);
        ok = FALSE;
      }
  if (ok)
    ok = run_plan (&rs, NULL, error);
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      int slot = plan->output_slots[i];
      OwbTensor *v = ok && slot >= 0 ? rs.values[slot] : NULL;
      if (ok && !v)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "subgraph output '%s' has no value",
                                ((OwbValueInfo *) g_ptr_array_index (graph->outputs, i))->name);
          ok = FALSE;
        }
      outputs[i] = NULL;
      if (v && !(outputs[i] = value_to_host (&rs, v, error)))
        ok = FALSE;
    }
  if (!ok)
    for (guint i = 0; i < graph->outputs->len; i++)
      g_clear_pointer (&outputs[i], owb_tensor_unref);
  run_state_clear (&rs);
  return ok;
}

/* A run takes an idle context (or a new one) for itself, so concurrent runs never share one. */
static RunContext *
run_context_take (OwbSession *s)
{
  g_mutex_lock (&s->contexts_lock);
  RunContext *c = s->run_contexts->len ? g_ptr_array_steal_index (s->run_contexts, s->run_contexts->len - 1) : NULL;
  g_mutex_unlock (&s->contexts_lock);
  if (!c)
    {
      c = g_new0 (RunContext, 1);
      c->n_arenas = s->devices->len;
      c->arenas = g_new0 (OwbArena *, c->n_arenas);
      for (guint d = 0; d < c->n_arenas; d++)
        {
          c->arenas[d] = _owb_arena_new_for_device (g_ptr_array_index (s->devices, d));
          _owb_arena_set_limit (c->arenas[d], s->memory_limit);
        }
      c->arena = c->arenas[0];
      c->n_memos = s->n_memos;
      c->memos = g_new0 (InferMemo, MAX (c->n_memos, 1));
    }
  for (guint d = 0; d < c->n_arenas; d++)
    _owb_arena_begin_run (c->arenas[d]);
  return c;
}

static void
run_context_give_back (OwbSession *s, RunContext *c)
{
  for (guint d = 0; d < c->n_arenas; d++)
    _owb_arena_end_run (c->arenas[d]);
  g_mutex_lock (&s->contexts_lock);
  if (s->run_contexts->len < MAX_IDLE_CONTEXTS)
    {
      g_ptr_array_add (s->run_contexts, c);
      c = NULL;
    }
  g_mutex_unlock (&s->contexts_lock);
  if (c)
    run_context_free (c);
}

void
owb_run_options_init (OwbRunOptions *options)
{
  memset (options, 0, sizeof *options);
}

gint64
owb_monotonic_ns (void)
{
  return _owb_now_ns ();
}

gboolean
owb_session_run (OwbSession *s, guint n_inputs, const char *const *input_names, OwbTensor *const *inputs,
                 guint n_outputs, const char *const *output_names, OwbTensor **outputs, OwbRunStats *stats,
                 GCancellable *cancellable, GError **error)
{
  OwbRunOptions options = { NULL, cancellable };
  return owb_session_run_with_options (s, &options, n_inputs, input_names, inputs, n_outputs, output_names, outputs,
                                       stats, error);
}

gboolean
owb_session_run_with_options (OwbSession *s, const OwbRunOptions *options, guint n_inputs,
                              const char *const *input_names, OwbTensor *const *inputs, guint n_outputs,
                              const char *const *output_names, OwbTensor **outputs, OwbRunStats *stats,
                              GError **error)
{
  RunState rs;
  GCancellable *cancellable = options ? options->cancellable : NULL;
  const OwbRunHooks *hooks = options && options->hooks ? options->hooks : NULL;
  OwbRunEvent run_event = { 0, 0, FALSE, NULL, owb_thread_pool_get_n_threads (s->pool) };
  if (hooks && !hooks->node_begin && !hooks->node_end && !hooks->run_begin && !hooks->run_end)
    hooks = NULL;
  if (hooks)
    {
      run_event.start_ns = _owb_now_ns ();
      if (hooks->run_begin)
        hooks->run_begin (&run_event, hooks->user_data);
    }
  RunContext *context = run_context_take (s);
  guint unplanned_copies = 0;
  run_state_init (&rs, s, s->main, context->arenas, &unplanned_copies, NULL, cancellable);
  rs.trace = hooks && (hooks->node_begin || hooks->node_end) ? hooks : NULL;
  guint n_inferred = 0;
  rs.n_inferred = &n_inferred;
  rs.memo_root = context->memos;
  rs.memos = context->memos + s->main->memo_base;
  const Plan *plan = s->main;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n_inputs; i++)
    {
      int slot = slot_get (plan, input_names[i]);
      const OwbValueInfo *info = input_names[i] ? g_hash_table_lookup (s->input_info, input_names[i]) : NULL;
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
      if (!rs.values[slot_get (plan, info->name)])
        {
          char *want = owb_value_type_to_string (&info->type);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "input '%s' (%s) was not given", info->name, want);
          g_free (want);
          ok = FALSE;
        }
    }
  guint n_run = 0;
  if (ok)
    ok = run_plan (&rs, &n_run, error);
  if (ok)
    {
      guint want = output_names ? n_outputs : s->outputs->len;
      for (guint i = 0; i < want; i++)
        outputs[i] = NULL;
      for (guint i = 0; ok && i < want; i++)
        {
          int slot = output_names ? slot_get (plan, output_names[i]) : plan->output_slots[i];
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
          else if (!(outputs[i] = value_to_host (&rs, rs.values[slot], error)))
            ok = FALSE;
        }
      /* Device work queued behind the last copies is done before the run returns. */
      for (guint d = 1; ok && d < s->devices->len; d++)
        {
          OwbDevice *device = g_ptr_array_index (s->devices, d);
          if (device->synchronize)
            ok = device->synchronize (device, error);
        }
      if (!ok)
        for (guint i = 0; i < want; i++)
          g_clear_pointer (&outputs[i], owb_tensor_unref);
    }
  OwbRunStats local_stats;
  if (!stats && hooks)
    stats = &local_stats;
  if (stats)
    {
      stats->peak_bytes = _owb_arena_get_peak (rs.arena);
      stats->allocated_bytes = _owb_arena_get_allocated (rs.arena);
      stats->n_nodes_run = n_run;
      stats->n_unplanned_copies = unplanned_copies;
      stats->n_inferred = n_inferred;
    }
  run_state_clear (&rs);
  run_context_give_back (s, context);
  if (hooks)
    {
      run_event.end_ns = _owb_now_ns ();
      run_event.ok = ok;
      run_event.stats = stats;
      if (hooks->run_end)
        hooks->run_end (&run_event, hooks->user_data);
    }
  return ok;
}
