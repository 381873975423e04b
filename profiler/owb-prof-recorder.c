/* owb-prof-recorder.c: turns a session's per-run hook calls into a run's nodes, iterations and
 * events (self times from the nesting of subgraph nodes, workers' shares as events of their own). */
#include "owb-prof-private.h"

#include <string.h>

typedef struct {
  gint64 children_ns; /* time of the nodes nested in this one so far */
} Frame;

struct _OwbProfRecorder {
  OwbProfRun *run;
  OwbRunHooks hooks;
  GHashTable *nodes;   /* const OwbNode * -> index + 1 in run->nodes */
  GArray *stack;       /* of Frame: nodes begun and not ended */
  gint64 origin_ns;    /* the first iteration's start */
  gboolean started;
  GString *scratch;
  GHashTable *origins; /* node name -> GPtrArray of the model's node names it replaced */
};

/* The model's nodes each node the optimizer made replaced, through every pass: a pass's "from"
 * may name a node an earlier pass made, whose own origins stand in for it. */
static GHashTable *
resolve_origins (const OwbSession *session)
{
  GHashTable *map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  const OwbOptimizeReport *report = session ? owb_session_get_optimize_report (session) : NULL;
  for (guint p = 0; report && p < report->passes->len; p++)
    {
      const OwbPassReport *pass = g_ptr_array_index (report->passes, p);
      /* resolved against the map as it was before this pass, then added */
      g_autoptr (GPtrArray) made = g_ptr_array_new ();
      for (guint c = 0; c < pass->created->len; c++)
        {
          const OwbOptimizeCreated *created = g_ptr_array_index (pass->created, c);
          GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
          for (guint f = 0; f < created->from->len; f++)
            {
              const char *from = g_ptr_array_index (created->from, f);
              GPtrArray *earlier = g_hash_table_lookup (map, from);
              for (guint k = 0; k < (earlier ? earlier->len : 1); k++)
                {
                  const char *name = earlier ? g_ptr_array_index (earlier, k) : from;
                  if (!g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
                    g_ptr_array_add (names, g_strdup (name));
                }
            }
          g_ptr_array_add (made, (gpointer) created->node);
          g_ptr_array_add (made, names);
        }
      for (guint k = 0; k < made->len; k += 2)
        g_hash_table_insert (map, g_strdup (g_ptr_array_index (made, k)), g_ptr_array_index (made, k + 1));
    }
  return map;
}

/* Without printf: this runs for every node of every profiled run (printf's dims were most of the
 * recorder's ~1 us per node). */
static void
append_dim (GString *s, int64_t v)
{
  char buf[24];
  int n = 0;
  guint64 u = v < 0 ? (guint64) -v : (guint64) v;
  do
    buf[n++] = (char) ('0' + u % 10);
  while ((u /= 10) > 0);
  if (v < 0)
    g_string_append_c (s, '-');
  while (n > 0)
    g_string_append_c (s, buf[--n]);
}

/* "float32[1,3,32,32] float32[8,3,3,3]" for a node's tensors; bytes gets their size. */
static const char *
describe_tensors (OwbProfRecorder *r, OwbTensor *const *tensors, int n, gint64 *bytes)
{
  GString *s = r->scratch;
  g_string_truncate (s, 0);
  *bytes = 0;
  for (int i = 0; i < n; i++)
    {
      const OwbTensor *t = tensors ? tensors[i] : NULL;
      if (i)
        g_string_append_c (s, ' ');
      if (!t)
        {
          g_string_append_c (s, '-');
          continue;
        }
      if (t->kind != OWB_VALUE_TENSOR)
        {
          g_string_append_printf (s, "%s<%s>(%u)", t->kind == OWB_VALUE_SEQUENCE ? "sequence"
                                                   : t->kind == OWB_VALUE_MAP ? "map" : "optional",
                                  owb_data_type_name (t->dtype), t->sequence ? t->sequence->len : 0);
          continue;
        }
      *bytes += (gint64) t->nbytes;
      g_string_append (s, owb_data_type_name (t->dtype));
      g_string_append_c (s, '[');
      for (int d = 0; d < t->rank; d++)
        {
          if (d)
            g_string_append_c (s, ',');
          append_dim (s, t->dims[d]);
        }
      g_string_append_c (s, ']');
    }
  return owb_prof_run_intern (r->run, s->str);
}

static guint
node_index (OwbProfRecorder *r, const OwbNodeEvent *ev)
{
  gpointer found = g_hash_table_lookup (r->nodes, ev->node);
  if (found)
    return GPOINTER_TO_UINT (found) - 1;
  const OwbNode *node = ev->node;
  g_autofree char *unnamed = NULL;
  const char *name = node->name;
  if (!name || !name[0])
    name = unnamed = g_strdup_printf ("%s#%d", node->op_type, ev->node_index);
  /* "" marks a missing optional input: kept, so positions stay */
  g_autofree const char **inputs = g_new0 (const char *, node->n_inputs + 1);
  g_autofree const char **outputs = g_new0 (const char *, node->n_outputs + 1);
  memcpy (inputs, node->inputs, node->n_inputs * sizeof *inputs);
  memcpy (outputs, node->outputs, node->n_outputs * sizeof *outputs);
  guint index = owb_prof_run_add_node (r->run, ev->graph_path, name, ev->op_type, ev->provider, inputs, outputs);
  GPtrArray *origins = ev->depth == 0 ? g_hash_table_lookup (r->origins, name) : NULL;
  /* a node that only renamed itself (origins: its own name) replaced nothing */
  if (origins && !(origins->len == 1 && strcmp (g_ptr_array_index (origins, 0), name) == 0))
    {
      g_ptr_array_add (origins, NULL);
      owb_prof_run_set_node_origins (r->run, index, (const char *const *) origins->pdata);
      g_ptr_array_remove_index (origins, origins->len - 1);
    }
  g_hash_table_insert (r->nodes, (gpointer) node, GUINT_TO_POINTER (index + 1));
  return index;
}

static void
on_run_begin (const OwbRunEvent *ev, gpointer data)
{
  OwbProfRecorder *r = data;
  if (!r->started)
    {
      r->origin_ns = ev->start_ns;
      r->started = TRUE;
    }
  g_array_set_size (r->stack, 0);
  if (r->run->threads <= 0)
    r->run->threads = ev->n_threads;
}

static void
on_run_end (const OwbRunEvent *ev, gpointer data)
{
  OwbProfRecorder *r = data;
  owb_prof_run_add_iteration (r->run, ev->start_ns - r->origin_ns, ev->end_ns - ev->start_ns);
}

static void
on_node_begin (const OwbNodeEvent *ev, gpointer data)
{
  OwbProfRecorder *r = data;
  Frame f = { 0 };
  g_array_append_val (r->stack, f);
}

static void
on_node_end (const OwbNodeEvent *ev, gpointer data)
{
  OwbProfRecorder *r = data;
  gint64 duration = ev->end_ns - ev->start_ns;
  gint64 children = 0;
  if (r->stack->len > 0)
    {
      children = g_array_index (r->stack, Frame, r->stack->len - 1).children_ns;
      g_array_set_size (r->stack, r->stack->len - 1);
    }
  if (r->stack->len > 0)
    g_array_index (r->stack, Frame, r->stack->len - 1).children_ns += duration;
  OwbProfEvent e = {
    .node = node_index (r, ev),
    .iteration = r->run->iterations->len,
    .thread = (guint) ev->thread,
    .kind = OWB_PROF_EVENT_NODE,
    .start_ns = ev->start_ns - r->origin_ns,
    .duration_ns = duration,
    .self_ns = MAX (duration - children, 0),
    .arena_bytes = (gint64) ev->arena_bytes,
  };
  /* interned, so the run's copy below keeps the same pointers */
  e.input_shapes = describe_tensors (r, ev->inputs, ev->n_inputs, &e.input_bytes);
  e.output_shapes = describe_tensors (r, ev->outputs, ev->n_outputs, &e.output_bytes);
  g_array_append_val (r->run->events, e);
  for (int w = 0; w < ev->n_workers; w++)
    {
      const OwbWorkerSpan *span = &ev->workers[w];
      OwbProfEvent share = e;
      share.kind = OWB_PROF_EVENT_WORKER;
      share.thread = (guint) span->worker;
      share.start_ns = span->start_ns - r->origin_ns;
      share.duration_ns = span->end_ns - span->start_ns;
      share.self_ns = span->busy_ns;
      g_array_append_val (r->run->events, share);
    }
}

OwbProfRecorder *
owb_prof_recorder_new (OwbProfRun *run, const OwbSession *session)
{
  OwbProfRecorder *r = g_new0 (OwbProfRecorder, 1);
  r->run = run;
  r->hooks = (OwbRunHooks){ on_run_begin, on_run_end, on_node_begin, on_node_end, r };
  r->nodes = g_hash_table_new (NULL, NULL);
  r->stack = g_array_new (FALSE, FALSE, sizeof (Frame));
  r->scratch = g_string_new (NULL);
  r->origins = resolve_origins (session);
  return r;
}

void
owb_prof_recorder_free (OwbProfRecorder *r)
{
  if (!r)
    return;
  g_hash_table_unref (r->nodes);
  g_array_unref (r->stack);
  g_string_free (r->scratch, TRUE);
  g_hash_table_unref (r->origins);
  g_free (r);
}

const OwbRunHooks *
owb_prof_recorder_get_hooks (OwbProfRecorder *r)
{
  return &r->hooks;
}
