/* test-util.h: small builders for models in tests. */
#pragma once

#include <owb/owb.h>
#include <stdarg.h>
#include <string.h>

static inline OwbModel *
tu_model_new (int opset)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 8;
  owb_model_set_opset (m, "", opset);
  m->graph = owb_graph_new ("test");
  m->graph->model = m;
  return m;
}

/* dims: -1 unknown; a param name may be given for dims listed as -2 through `params`. */
static inline void
tu_add_value (GPtrArray *list, const char *name, OwbDataType dtype, int rank, const int64_t *dims,
              const char *const *params)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, dtype, rank, NULL);
  for (int i = 0; i < rank; i++)
    {
      if (dims[i] >= 0)
        t.dims[i] = OWB_DIM_VALUE (dims[i]);
      else if (dims[i] == -2 && params)
        t.dims[i] = (OwbDim){ -1, g_intern_string (params[i]) };
      else
        t.dims[i] = OWB_DIM_UNKNOWN;
    }
  g_ptr_array_add (list, owb_value_info_new (name, &t));
}

/* A graph output whose type is left to inference (has_type FALSE). */
static inline void
tu_add_untyped_output (GPtrArray *list, const char *name)
{
  tu_add_value (list, name, OWB_TYPE_UNDEFINED, 0, NULL, NULL);
  ((OwbValueInfo *) g_ptr_array_index (list, list->len - 1))->has_type = FALSE;
}

/* The inputs "i0".."i<n_in - 1>" of a one-node model in g: in[i] NULL is an absent input, an
 * initializer where bit i of const_mask is set, a graph input of in[i]'s type otherwise. Returns
 * the node's input list for tu_node ("i0,,i2" where i1 is absent); free it. */
static inline char *
tu_add_indexed_inputs (OwbGraph *g, int n_in, OwbTensor *const *in, guint const_mask)
{
  GString *names = g_string_new (NULL);
  for (int i = 0; i < n_in; i++)
    {
      if (i)
        g_string_append_c (names, ',');
      if (!in[i])
        continue;
      char name[16];
      g_snprintf (name, sizeof name, "i%d", i);
      g_string_append (names, name);
      if (const_mask & (1u << i))
        owb_graph_add_initializer (g, name, owb_tensor_ref (in[i]));
      else
        tu_add_value (g->inputs, name, in[i]->dtype, in[i]->rank, in[i]->dims, NULL);
    }
  return g_string_free (names, FALSE);
}

/* Runs s once, feeding the inputs tu_add_indexed_inputs made graph inputs (in[i] not NULL, bit i
 * of const_mask clear) and asking out_names (NULL: every output); outputs receive new references. */
static inline gboolean
tu_run_indexed (OwbSession *s, int n_in, OwbTensor *const *in, guint const_mask, int n_out,
                const char *const *out_names, OwbTensor **outs, GError **error)
{
  const char *names[16];
  OwbTensor *feeds[16];
  char buf[16][16];
  guint n = 0;
  g_assert_cmpint (n_in, <=, 16);
  for (int i = 0; i < n_in; i++)
    if (in[i] && !(const_mask & (1u << i)))
      {
        g_snprintf (buf[n], sizeof buf[n], "i%d", i);
        names[n] = buf[n];
        feeds[n++] = in[i];
      }
  return owb_session_run (s, n, names, feeds, n_out, out_names, outs, NULL, NULL, error);
}

/* tu_node (graph, "Add", "n1", "a,b", "c"): comma-separated names, "" an absent input; added to g
 * unless g is NULL. */
static inline OwbNode *
tu_node (OwbGraph *g, const char *op, const char *name, const char *inputs, const char *outputs)
{
  OwbNode *n = owb_node_new (op, "", name);
  if (inputs && inputs[0])
    {
      g_auto (GStrv) ins = g_strsplit (inputs, ",", -1);
      for (int i = 0; ins[i]; i++)
        owb_node_add_input (n, ins[i]);
    }
  g_auto (GStrv) outs = g_strsplit (outputs, ",", -1);
  for (int i = 0; outs[i]; i++)
    owb_node_add_output (n, outs[i]);
  if (g)
    owb_graph_add_node (g, n);
  return n;
}

static inline OwbTensor *
tu_floats (int rank, const int64_t *dims, const float *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  if (values)
    memcpy (t->data, values, t->nbytes);
  return t;
}

static inline OwbSession *
tu_session (OwbModel *m, int threads, GError **error)
{
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.n_threads = threads;
  OwbSession *s = owb_session_new (m, &opts, error);
  g_ptr_array_unref (opts.providers);
  return s;
}

/* Attribute setters for nodes built by hand. An empty list still gets storage (ints / floats are
 * never NULL), so it reads as a present, empty attribute. */
static inline void
tu_set_int (OwbNode *node, const char *name, int64_t v)
{
  owb_node_add_attribute (node, name, OWB_ATTR_INT)->i = v;
}

static inline void
tu_set_float (OwbNode *node, const char *name, float v)
{
  owb_node_add_attribute (node, name, OWB_ATTR_FLOAT)->f = v;
}

static inline void
tu_set_string (OwbNode *node, const char *name, const char *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_STRING);
  a->s = g_strdup (v);
  a->s_len = strlen (v);
}

static inline void
tu_set_ints (OwbNode *node, const char *name, int n, const int64_t *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_INTS);
  a->n = n;
  a->ints = n > 0 ? g_memdup2 (v, sizeof (int64_t) * n) : g_new0 (int64_t, 1);
}

static inline void
tu_set_floats (OwbNode *node, const char *name, int n, const float *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_FLOATS);
  a->n = n;
  a->floats = n > 0 ? g_memdup2 (v, sizeof (float) * n) : g_new0 (float, 1);
}

/* A tensor with a copy of `data` (NULL: zero-filled). */
static inline OwbTensor *
tu_new_tensor (OwbDataType dtype, int rank, const int64_t *dims, const void *data)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  g_assert_nonnull (t);
  if (data && t->nbytes)
    memcpy (t->data, data, t->nbytes);
  return t;
}

/* A rank-1 tensor of n values copied from `values` (of dtype's C type). */
static inline OwbTensor *
tu_vector (OwbDataType dtype, int64_t n, const void *values)
{
  return tu_new_tensor (dtype, 1, &n, values);
}
