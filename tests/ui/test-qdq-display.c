/* test-qdq-display.c: the display copy of a QDQ model with its pairs collapsed (GTK-free): nodes
 * read the float tensors the pairs wrapped and weights stored quantized, the badges say the
 * integer types on each side, chains of pairs collapse to the first float tensor, a pair on a
 * graph output stays, and the model itself is left as it was. */
#include "owb-qdq-display.h"
#include "owb-graph-scene.h"
#include "../engine/test-util.h"

#include <string.h>

static const OwbNode *
find_node (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (g_strcmp0 (n->name, name) == 0)
        return n;
    }
  return NULL;
}

static OwbTensor *
scalar (OwbDataType type, double v)
{
  OwbTensor *t = owb_tensor_new (type, 0, NULL, NULL);
  if (type == OWB_TYPE_FLOAT)
    *(float *) t->data = (float) v;
  else if (type == OWB_TYPE_UINT8)
    *(guint8 *) t->data = (guint8) v;
  else
    *(gint8 *) t->data = (gint8) v;
  return t;
}

/* x -Q/DQ(u8)-> Conv (weight int8 behind a DQ) -> c -Q/DQ(u8)-> MaxPool -> p -Q(s8)/DQ-> Q/DQ(u8)
 * (a requantization chain) -> Relu -> y -Q/DQ-> out (a pair on the graph output stays). */
static OwbModel *
qdq_model (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  int64_t xd[] = { 1, 2, 4, 4 }, wd[] = { 2, 2, 1, 1 };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, xd, NULL);
  tu_add_value (g->outputs, "out", OWB_TYPE_FLOAT, 4, xd, NULL);
  owb_graph_add_initializer (g, "s", scalar (OWB_TYPE_FLOAT, 0.05));
  owb_graph_add_initializer (g, "zu8", scalar (OWB_TYPE_UINT8, 128));
  owb_graph_add_initializer (g, "zs8", scalar (OWB_TYPE_INT8, 0));
  OwbTensor *w = owb_tensor_new (OWB_TYPE_INT8, 4, wd, NULL);
  for (int i = 0; i < 4; i++)
    ((gint8 *) w->data)[i] = (gint8) (i * 10 - 15);
  owb_graph_add_initializer (g, "w_q", w);
  tu_node (g, "QuantizeLinear", "x_q", "x,s,zu8", "x_qv");
  tu_node (g, "DequantizeLinear", "x_dq", "x_qv,s,zu8", "x_d");
  tu_node (g, "DequantizeLinear", "w_dq", "w_q,s,zs8", "w_d");
  tu_node (g, "Conv", "conv", "x_d,w_d", "c");
  tu_node (g, "QuantizeLinear", "c_q", "c,s,zu8", "c_qv");
  tu_node (g, "DequantizeLinear", "c_dq", "c_qv,s,zu8", "c_d");
  tu_node (g, "MaxPool", "pool", "c_d", "p");
  tu_node (g, "QuantizeLinear", "p_q", "p,s,zs8", "p_qv");
  tu_node (g, "DequantizeLinear", "p_dq", "p_qv,s,zs8", "p_d");
  tu_node (g, "QuantizeLinear", "p_q2", "p_d,s,zu8", "p_qv2");
  tu_node (g, "DequantizeLinear", "p_dq2", "p_qv2,s,zu8", "p_d2");
  tu_node (g, "Relu", "relu", "p_d2", "y");
  tu_node (g, "QuantizeLinear", "y_q", "y,s,zu8", "y_qv");
  tu_node (g, "DequantizeLinear", "y_dq", "y_qv,s,zu8", "out");
  OwbAttribute *a = owb_node_add_attribute ((OwbNode *) find_node (g, "pool"), "kernel_shape", OWB_ATTR_INTS);
  int64_t k[] = { 1, 1 };
  a->n = 2, a->ints = g_memdup2 (k, sizeof k);
  return m;
}

static void
test_collapse (void)
{
  g_autoptr (OwbModel) m = qdq_model ();
  guint n_before = m->graph->nodes->len;
  g_autoptr (OwbQdqDisplay) d = owb_qdq_display_new (m);
  const OwbGraph *g = owb_qdq_display_get_model (d)->graph;

  /* the model is untouched */
  g_assert_cmpuint (m->graph->nodes->len, ==, n_before);
  g_assert_cmpstr (find_node (m->graph, "conv")->inputs[0], ==, "x_d");

  /* x's pair, the weight's DQ, c's pair and both pairs of the chain go; the output's pair stays */
  g_assert_cmpuint (owb_qdq_display_get_n_hidden (d), ==, 2 + 1 + 2 + 4);
  g_assert_cmpuint (g->nodes->len, ==, n_before - 9);
  g_assert_null (find_node (g, "x_q"));
  g_assert_null (find_node (g, "w_dq"));
  g_assert_null (find_node (g, "p_q2"));
  g_assert_nonnull (find_node (g, "y_q"));
  g_assert_nonnull (find_node (g, "y_dq"));

  const OwbNode *conv = find_node (g, "conv");
  g_assert_cmpstr (conv->inputs[0], ==, "x");
  g_assert_cmpstr (conv->inputs[1], ==, "w_q");
  g_assert_cmpstr (find_node (g, "pool")->inputs[0], ==, "c");
  g_assert_cmpstr (find_node (g, "relu")->inputs[0], ==, "p");

  /* reads u8 and s8 (the weight), its output quantized to u8 */
  g_assert_cmpstr (owb_qdq_display_get_badge (d, conv), ==, "u8, s8 ← / → u8");
  /* reads u8; its output quantized to s8 (the first of the chain) */
  g_assert_cmpstr (owb_qdq_display_get_badge (d, find_node (g, "pool")), ==, "u8 ← / → s8");
  /* reads the chain's last type; its own pair stays visible, so no output side */
  g_assert_cmpstr (owb_qdq_display_get_badge (d, find_node (g, "relu")), ==, "u8 ←");
  g_assert_null (owb_qdq_display_get_badge (d, find_node (g, "y_q")));

  /* the badge as the scene's first line of the box, which is laid out wide enough for it; the
   * note is not repeated among the attributes */
  OwbSceneStyle style;
  owb_scene_style_init (&style);
  g_autoptr (GError) error = NULL;
  OwbGraphScene *scene = owb_graph_scene_new (g, &style, NULL, &error);
  g_assert_no_error (error);
  int k = owb_graph_scene_find_op (scene, conv);
  g_assert_cmpint (k, >=, 0);
  const OwbSceneNode *box = owb_graph_scene_get_node (scene, (guint) k);
  g_assert_cmpuint (box->n_lines, >=, 2);
  g_assert_cmpstr (box->lines[0].text, ==, "u8, s8 ← / → u8");
  for (guint i = 1; i < box->n_lines; i++)
    g_assert_null (strstr (box->lines[i].text, "display-note"));
  g_assert_cmpfloat (box->width, >=, 7.0 * g_utf8_strlen ("u8, s8 ← / → u8", -1));
  owb_graph_scene_free (scene);
}

/* A model with no QDQ: the same nodes, no badges. */
static void
test_float_model (void)
{
  OwbModel *m = tu_model_new (13);
  int64_t dims[] = { 1, 4 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_node (m->graph, "Relu", "relu", "x", "y");
  OwbQdqDisplay *d = owb_qdq_display_new (m);
  g_assert_cmpuint (owb_qdq_display_get_n_hidden (d), ==, 0);
  const OwbGraph *g = owb_qdq_display_get_model (d)->graph;
  g_assert_cmpuint (g->nodes->len, ==, 1);
  g_assert_null (owb_qdq_display_get_badge (d, g_ptr_array_index (g->nodes, 0)));
  owb_model_unref (m);
  /* the copy outlives its source */
  g_assert_cmpstr (((OwbNode *) g_ptr_array_index (owb_qdq_display_get_model (d)->graph->nodes, 0))->name, ==, "relu");
  owb_qdq_display_unref (d);
  owb_qdq_display_unref (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qdq-display/collapse", test_collapse);
  g_test_add_func ("/qdq-display/float-model", test_float_model);
  return g_test_run ();
}
