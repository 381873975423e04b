/* test-devices.c: the session's device paths (owb-provider.h, owb-device.h) through the test device
 * provider: placement, Memcpy nodes, constants uploaded once, shape inputs on the host, memory
 * planned per device and given back, subgraphs, and the contract checks. */
#include "../engine/test-util.h"
#include "owb-testdev.h"

#include <owb/owb.h>

static OwbSession *
session_with (OwbModel *m, const char *providers, OwbOptimizeLevel level, GError **error)
{
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list (providers, error);
  if (!opts.providers)
    return NULL;
  opts.n_threads = 1;
  opts.optimize = level;
  OwbSession *s = owb_session_new (m, &opts, error);
  g_ptr_array_unref (opts.providers);
  return s;
}

/* X[2,3] -> MatMul(W[3,4]) -> A -> Relu -> B; Shape(B) -> S (host op); Reshape(B, [4,2]) -> C;
 * Add(C, C) -> Y. Outputs Y and S. */
static OwbModel *
mixed_model (void)
{
  OwbModel *m = tu_model_new (17);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "X", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  float w[12];
  for (int i = 0; i < 12; i++)
    w[i] = (float) (i % 5) - 2.0f;
  owb_graph_add_initializer (g, "W", tu_floats (2, (int64_t[]){ 3, 4 }, w));
  int64_t shape[] = { 4, 2 };
  owb_graph_add_initializer (g, "shape", tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, shape));
  tu_node (g, "MatMul", "mm", "X,W", "A");
  tu_node (g, "Relu", "relu", "A", "B");
  tu_node (g, "Shape", "shape_of", "B", "S");
  tu_node (g, "Reshape", "reshape", "B,shape", "C");
  tu_node (g, "Add", "add", "C,C", "Y");
  tu_add_value (g->outputs, "Y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 2 }, NULL);
  tu_add_value (g->outputs, "S", OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  return m;
}

static OwbTensor *
input_x (void)
{
  float x[6] = { 1, -2, 3, 0.5f, 4, -1 };
  return tu_floats (2, (int64_t[]){ 2, 3 }, x);
}

static void
run_model (OwbSession *s, OwbTensor **outs, OwbRunStats *stats)
{
  g_autoptr (GError) error = NULL;
  const char *names[] = { "X" };
  OwbTensor *x = input_x ();
  gboolean ok = owb_session_run (s, 1, names, &x, 2, NULL, outs, stats, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  owb_tensor_unref (x);
}

static void
assert_same (const OwbTensor *a, const OwbTensor *b)
{
  g_assert_null (a->device);
  g_assert_null (b->device);
  g_assert_cmpint (a->dtype, ==, b->dtype);
  g_assert_cmpint (a->nbytes, ==, b->nbytes);
  g_assert_cmpmem (a->data, a->nbytes, b->data, b->nbytes);
}

static const OwbNode *
find_node (const OwbGraph *g, const char *op, const char *input)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (strcmp (n->op_type, op) == 0 && (!input || strcmp (n->inputs[0], input) == 0))
        return n;
    }
  return NULL;
}

static guint
count_ops (const OwbGraph *g, const char *op)
{
  guint k = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    k += strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, op) == 0;
  return k;
}

static void
test_placement (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) m = mixed_model ();
  OwbTestdevStats before, after_create, after_run1, after_run2, after_free;
  owb_testdev_get_stats (&before);

  g_autoptr (OwbSession) cpu = session_with (m, "cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  OwbSession *dev = session_with (m, "testdev,cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  owb_testdev_get_stats (&after_create);

  /* Placement and the copies, in the session's graph. */
  const OwbGraph *g = owb_session_get_graph (dev);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      for (guint d = 0; n->declines && d < n->declines->len; d++)
        g_test_message ("%s: %s", n->op_type, ((OwbDecline *) g_ptr_array_index (n->declines, d))->reason);
    }
  g_assert_cmpstr (find_node (g, "MatMul", NULL)->provider, ==, "testdev");
  g_assert_cmpstr (find_node (g, "Relu", NULL)->provider, ==, "testdev");
  g_assert_cmpstr (find_node (g, "Reshape", NULL)->provider, ==, "testdev");
  const OwbNode *shape = find_node (g, "Shape", NULL);
  g_assert_cmpstr (shape->provider, ==, "cpu");
  g_assert_nonnull (shape->declines);
  g_assert_cmpstr (((OwbDecline *) g_ptr_array_index (shape->declines, 0))->reason, ==,
                   "testdev leaves Shape to the host");
  /* X to the device; B back for Shape; Y back as the graph output. The weight is uploaded, not
   * copied per run, and Reshape's shape stays on the host. */
  g_assert_cmpuint (count_ops (g, "MemcpyFromHost"), ==, 1);
  g_assert_cmpuint (count_ops (g, "MemcpyToHost"), ==, 2);
  g_assert_nonnull (find_node (g, "MemcpyFromHost", "X"));
  g_assert_nonnull (find_node (g, "MemcpyToHost", "B"));
  const OwbNode *to_y = find_node (g, "MemcpyToHost", "Y@testdev");
  g_assert_nonnull (to_y);
  g_assert_cmpstr (to_y->outputs[0], ==, "Y");
  g_assert_cmpstr (find_node (g, "Add", NULL)->outputs[0], ==, "Y@testdev");
  g_assert_cmpstr (find_node (g, "MatMul", NULL)->inputs[0], ==, "X@testdev");
  g_assert_cmpstr (find_node (g, "MatMul", NULL)->inputs[1], ==, "W@testdev");
  g_assert_cmpstr (find_node (g, "Reshape", NULL)->inputs[1], ==, "shape");
  g_assert_cmpint (after_create.to_device - before.to_device, ==, 1); /* W, once */

  OwbTensor *want[2], *got[2];
  OwbRunStats stats;
  run_model (cpu, want, NULL);
  run_model (dev, got, &stats);
  owb_testdev_get_stats (&after_run1);
  assert_same (want[0], got[0]);
  assert_same (want[1], got[1]);
  g_assert_cmpuint (stats.n_unplanned_copies, ==, 0);
  g_assert_cmpint (after_run1.kernels - after_create.kernels, ==, 4);
  g_assert_cmpint (after_run1.to_device - after_create.to_device, ==, 1);
  g_assert_cmpint (after_run1.to_host - after_create.to_host, ==, 2);
  for (int i = 0; i < 2; i++)
    owb_tensor_unref (got[i]);

  /* A second run reuses the device arena: no new device buffers. */
  run_model (dev, got, NULL);
  owb_testdev_get_stats (&after_run2);
  g_assert_cmpint (after_run2.allocs, ==, after_run1.allocs);
  assert_same (want[0], got[0]);
  for (int i = 0; i < 2; i++)
    {
      owb_tensor_unref (got[i]);
      owb_tensor_unref (want[i]);
    }

  /* Every device buffer goes back with the session (the uploaded weight included). */
  owb_session_free (dev);
  owb_testdev_get_stats (&after_free);
  g_assert_cmpint (after_free.live_bytes, ==, before.live_bytes);
  g_assert_cmpint (after_free.allocs - before.allocs, ==, after_free.frees - before.frees);
}

/* If (on the host) whose branches run Relu / Neg on the device over a value made on the device in
 * the outer graph. */
static void
test_subgraph (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) m = tu_model_new (17);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "X", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  tu_add_value (g->inputs, "cond", OWB_TYPE_BOOL, 0, NULL, NULL);
  tu_node (g, "Abs", "abs", "X", "A");
  OwbNode *n_if = tu_node (g, "If", "if", "cond", "Y");
  const char *branch_ops[] = { "Relu", "Neg" };
  const char *branch_names[] = { "then_branch", "else_branch" };
  for (int b = 0; b < 2; b++)
    {
      OwbGraph *body = owb_graph_new (branch_names[b]);
      body->parent = g;
      body->model = m;
      tu_node (body, branch_ops[b], branch_ops[b], "A", "out");
      tu_add_value (body->outputs, "out", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
      OwbAttribute *attr = owb_node_add_attribute (n_if, branch_names[b], OWB_ATTR_GRAPH);
      attr->g = body;
    }
  tu_add_value (g->outputs, "Y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);

  g_autoptr (OwbSession) cpu = session_with (m, "cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  g_autoptr (OwbSession) dev = session_with (m, "testdev,cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (find_node (owb_session_get_graph (dev), "If", NULL)->provider, ==, "cpu");
  for (int c = 0; c < 2; c++)
    {
      OwbTensor *x = input_x ();
      gboolean cv = c == 0;
      OwbTensor *cond = tu_new_tensor (OWB_TYPE_BOOL, 0, NULL, &cv);
      const char *names[] = { "X", "cond" };
      OwbTensor *ins[] = { x, cond };
      OwbTensor *want = NULL, *got = NULL;
      g_assert_true (owb_session_run (cpu, 2, names, ins, 1, NULL, &want, NULL, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (owb_session_run (dev, 2, names, ins, 1, NULL, &got, NULL, NULL, &error));
      g_assert_no_error (error);
      assert_same (want, got);
      owb_tensor_unref (want);
      owb_tensor_unref (got);
      owb_tensor_unref (x);
      owb_tensor_unref (cond);
    }
}

/* A provider that breaks the contract: its device kernel returns a host tensor. */
static gboolean
bad_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = owb_tensor_new (in->dtype, in->rank, in->dims, error);
  owb_tensor_unref (ctx->outputs[0]);
  ctx->outputs[0] = out;
  return TRUE;
}

static const OwbKernelDef bad_relu = { .op_type = "Relu", .since = 1, .compute = bad_compute };

static gboolean
bad_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
           const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  if (strcmp (node->op_type, "Relu") != 0)
    {
      *reason = g_strdup ("only Relu");
      return FALSE;
    }
  choice->def = &bad_relu;
  choice->state = NULL;
  return TRUE;
}

static void
bad_free (OwbProvider *provider)
{
  OwbProvider *testdev = provider->priv;
  testdev->free (testdev);
  g_free (provider);
}

static OwbProvider *
bad_provider_new (void)
{
  OwbProvider *p = g_new0 (OwbProvider, 1);
  OwbProvider *testdev = owb_testdev_provider_new (); /* for its device */
  p->name = "bad";
  p->device = testdev->device;
  p->claim = bad_claim;
  p->free = bad_free;
  p->priv = testdev;
  return p;
}

static void
test_contract (void)
{
  g_autoptr (GError) error = NULL;
  owb_providers_register ("bad", bad_provider_new);
  g_autoptr (OwbModel) m = mixed_model ();
  g_autoptr (OwbSession) s = session_with (m, "bad,cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  OwbTensor *outs[2] = { NULL, NULL };
  const char *names[] = { "X" };
  OwbTensor *x = input_x ();
  g_assert_false (owb_session_run (s, 1, names, &x, 2, NULL, outs, NULL, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "the bad kernel made output 'B' in host memory, not in testdev memory"));
  owb_tensor_unref (x);
}

static void
test_registry (void)
{
  g_autoptr (GError) error = NULL;
  gboolean listed = FALSE;
  for (const char *const *n = owb_providers_get_available (); *n; n++)
    listed |= strcmp (*n, "testdev") == 0;
  g_assert_true (listed);
  g_autoptr (GPtrArray) p = owb_providers_new_from_list ("testdev", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->len, ==, 2); /* the CPU is added last */
  g_assert_cmpstr (((OwbProvider *) g_ptr_array_index (p, 1))->name, ==, "cpu");
  g_autoptr (GPtrArray) none = owb_providers_new_from_list ("nosuch,cpu", &error);
  g_assert_null (none);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "testdev"));
}

/* Constant folding runs on the CPU: making an optimized session runs no device kernel. */
static void
test_folding_on_host (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) m = tu_model_new (17);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "X", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  float c[6] = { 1, 2, 3, 4, 5, 6 };
  owb_graph_add_initializer (g, "c", tu_floats (2, (int64_t[]){ 2, 3 }, c));
  tu_node (g, "Neg", "neg", "c", "nc");
  tu_node (g, "Add", "add", "X,nc", "Y");
  tu_add_value (g->outputs, "Y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  OwbTestdevStats a, b;
  owb_testdev_get_stats (&a);
  g_autoptr (OwbSession) s = session_with (m, "testdev,cpu", OWB_OPTIMIZE_BASIC, &error);
  g_assert_no_error (error);
  owb_testdev_get_stats (&b);
  g_assert_cmpint (b.kernels, ==, a.kernels);
  g_assert_null (find_node (owb_session_get_graph (s), "Neg", NULL)); /* folded */
  g_assert_cmpstr (find_node (owb_session_get_graph (s), "Add", NULL)->provider, ==, "testdev");
}

/* A session that owns its model keeps a weight that only device kernels read once: on the device.
 * Reshape's shape, read on the host, keeps its host storage. */
static void
test_weights_once (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) ref_model = mixed_model ();
  g_autoptr (OwbSession) cpu = session_with (ref_model, "cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("testdev,cpu", &error);
  opts.n_threads = 1;
  g_autoptr (OwbSession) dev = owb_session_new_take (mixed_model (), &opts, &error);
  g_ptr_array_unref (opts.providers);
  g_assert_no_error (error);
  const OwbGraph *g = owb_session_get_graph (dev);
  g_assert_null (owb_graph_get_initializer (g, "W")->data);
  g_assert_nonnull (owb_graph_get_initializer (g, "shape")->data);
  OwbTensor *want[2], *got[2];
  run_model (cpu, want, NULL);
  run_model (dev, got, NULL);
  for (int i = 0; i < 2; i++)
    {
      assert_same (want[i], got[i]);
      owb_tensor_unref (want[i]);
      owb_tensor_unref (got[i]);
    }
}

static const OwbGraph *
body_of (const OwbNode *node)
{
  for (int a = 0; a < node->n_attributes; a++)
    if (strcmp (node->attributes[a].name, "body") == 0)
      return node->attributes[a].g;
  return NULL;
}

/* claim_group: X -> Relu -> Neg -> b; Shape(b) on the host; Abs(b) -> Add(X) -> Y. The test device
 * fuses [Relu, Neg] and [Abs, Add] into DeviceGroup nodes. */
static void
test_group (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) m = tu_model_new (17);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "X", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  tu_node (g, "Relu", "relu", "X", "a");
  tu_node (g, "Neg", "neg", "a", "b");
  tu_node (g, "Shape", "shape", "b", "S");
  tu_node (g, "Abs", "abs", "b", "c");
  tu_node (g, "Add", "add", "c,X", "Y");
  tu_add_value (g->outputs, "Y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  tu_add_value (g->outputs, "S", OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  g_autoptr (OwbSession) cpu = session_with (m, "cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  g_autoptr (OwbSession) dev = session_with (m, "testdev,cpu", OWB_OPTIMIZE_DISABLED, &error);
  g_assert_no_error (error);
  const OwbGraph *sg = owb_session_get_graph (dev);
  g_assert_cmpuint (count_ops (sg, "DeviceGroup"), ==, 2);
  const OwbNode *g1 = find_node (sg, "DeviceGroup", NULL);
  g_assert_cmpstr (g1->provider, ==, "testdev");
  g_assert_cmpuint (body_of (g1)->nodes->len, ==, 2);
  g_assert_cmpstr (((OwbNode *) g_ptr_array_index (body_of (g1)->nodes, 0))->op_type, ==, "Relu");
  g_assert_cmpint (g1->n_outputs, ==, 1); /* a is internal; b is read after the group */
  g_assert_cmpuint (count_ops (sg, "Relu"), ==, 0);

  OwbTestdevStats a, b;
  owb_testdev_get_stats (&a);
  OwbTensor *want[2], *got[2];
  OwbRunStats stats;
  run_model (cpu, want, NULL);
  run_model (dev, got, &stats);
  owb_testdev_get_stats (&b);
  g_assert_cmpint (b.groups - a.groups, ==, 2);
  g_assert_cmpuint (stats.n_unplanned_copies, ==, 0);
  for (int i = 0; i < 2; i++)
    {
      assert_same (want[i], got[i]);
      owb_tensor_unref (want[i]);
      owb_tensor_unref (got[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  owb_testdev_register ();
  g_test_add_func ("/devices/placement", test_placement);
  g_test_add_func ("/devices/subgraph", test_subgraph);
  g_test_add_func ("/devices/group", test_group);
  g_test_add_func ("/devices/weights-once", test_weights_once);
  g_test_add_func ("/devices/contract", test_contract);
  g_test_add_func ("/devices/registry", test_registry);
  g_test_add_func ("/devices/folding-on-host", test_folding_on_host);
  return g_test_run ();
}
