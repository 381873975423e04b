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

/* tu_node (graph, "Add", "n1", "in:a,b", "out:c") — comma-separated names, "" allowed as empty. */
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
