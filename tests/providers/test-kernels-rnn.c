/* test-kernels-rnn.c: LSTM, GRU and RNN against values from an independent NumPy implementation
 * (checked against ONNX Runtime), plus attribute errors and symbolic shape inference. */
#include <string.h>

#include <owb/owb.h>
#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* Expected outputs, computed once by a NumPy loop-per-step implementation of the ONNX equations on the
 * inputs fill() makes, and checked against ONNX Runtime 1.31 (float32) to 1e-7. */
static const double gru_y[] = { -0.209945291281, 0.194941103458, -0.257619142532, 0.194487705827, -0.0951413363218, 0.106894366443, -0.273044347763, -0.0472931787372, 0.0400561280549, -0.0961232930422, -0.0987207069993, -0.0263887830079, 0.37351089716, -0.331101238728, -0.148450925946, -0.15643119812, 0.0578389540315, 0.00313600897789, 0.225784793496, 0.0221393182874, -0.30283805728, 0, 0, 0, -0.294891178608, -0.170036569238, 0.373481035233, 0.333797335625, -0.263391435146, -0.122739195824, 0, 0, 0, -0.177713707089, 0.0777851343155, 0.272128343582, 0.220937848091, -0.0133606158197, -0.300335586071, 0, 0, 0, 0, 0, 0, 0.040745511651, -0.167890101671, 0.0600289404392, 0, 0, 0, 0, 0, 0, 0.180056780577, -0.128706336021, 0.19106811285, 0, 0, 0, 0, 0, 0, -0.109392225742, -0.245455592871, 0.330814868212, 0, 0, 0, 0, 0, 0 };
static const double gru_y_h[] = { 0.180056780577, -0.128706336021, 0.19106811285, 0.194487705827, -0.0951413363218, 0.106894366443, -0.294891178608, -0.170036569238, 0.373481035233, -0.0961232930422, -0.0987207069993, -0.0263887830079, 0.37351089716, -0.331101238728, -0.148450925946, -0.15643119812, 0.0578389540315, 0.00313600897789 };
static const double gru2_y[] = { -0.0547067194707, 0.322984500127, -0.447598413946, 0.241947806057, -0.0228203373849, -0.200536617642, -0.511011655966, 0.0687149463268, 0.166737194794, 0.218246883319, -0.243651813757, -0.131903703413, 0, 0, 0, -0.403831151909, -0.186006143761, 0.403831151909, -0.00232227192926, -0.113272186453, 0.102715011197, 0, 0, 0, 0, 0, 0, -0.0854395795112, -0.200536617642, 0.378219762889, 0, 0, 0, 0, 0, 0 };
static const double gru2_y_h[] = { -0.0547067194707, 0.322984500127, -0.447598413946, 0.241947806057, -0.0228203373849, -0.200536617642, -0.511011655966, 0.0687149463268, 0.166737194794 };
static const double lstm_y[] = { 0.0779944187086, 0.0577226450316, -0.155570469652, 0, 0, 0, 0.103183247795, -0.00339490904189, -0.204201136874, 0.0946002382932, 0.0112713795441, 0.0418780146653, 0, 0, 0, -0.181092800596, 0.0599188249652, -0.128090396316, 0.058608659493, -0.0314892770667, -0.158778541725, 0, 0, 0, 0.082734234336, -0.0791613611714, -0.122815191874, -0.246424065321, 0.0858072481251, -0.0804610285296, 0, 0, 0, -0.170593727673, 0.0769656035447, -0.0709117908085, 0.0856231511136, -0.0626571360325, -0.145558914559, 0, 0, 0, 0.0893029517023, -0.089030640544, -0.123240083611, -0.18105933476, 0.131914196186, -0.0474698350119, 0, 0, 0, -0.0320168630025, 0.018625709225, -0.0416121490749, 0, 0, 0, 0, 0, 0, 0.0357771145757, 0.117768647795, -0.13430795023, 0, 0, 0, 0, 0, 0, 0.198243676315, -0.0810882072944, 0.0787135960852 };
static const double lstm_y_h[] = { 0.0856231511136, -0.0626571360325, -0.145558914559, 0, 0, 0, 0.0357771145757, 0.117768647795, -0.13430795023, 0.0946002382932, 0.0112713795441, 0.0418780146653, 0, 0, 0, -0.181092800596, 0.0599188249652, -0.128090396316 };
static const double lstm_y_c[] = { 0.215745484253, -0.139036899257, -0.241080271686, 0, 0, 0, 0.0535338354428, 0.299127153358, -0.321238917401, 0.18463936878, 0.0304729951351, 0.123566076151, 0, 0, 0, -0.384588191666, 0.101950322936, -0.427395104299 };
static const double rnn_y[] = { 0, 0.526530623436, 0, 0.318367362022, 0, 0.428571462631, 0, 0.397959172726, 0, 0.316530942917, -0.0257939845324, 0.187321305275, -0.0149001758546, -0.10407692939, -0.0157026574016, 0.386346995831, -0.0333729051054, 0.0568738132715, 0.27813410759, 0, 0.800728857517, 0.0988338142633, 0.283819258213, 0, 0, 0, 0, -0.032357249409, -0.110016599298, -0.0101249329746, 0.318264901638, -0.0436272099614, 0.0429215729237, -0.0553348585963, 0.685730874538, -0.0678711384535, 0.190358176827, 0.0772959291935, 0, 0, 0, 0, 0.171428576112, 0.0122449025512, 0.208163261414, 0.226913288236, -0.055149871856, 0.0420918241143, -0.0632880851626, 0.687545597553, -0.0590105652809, 0.094241976738, -0.0787992030382, -0.00360787473619, 0, 0, 0, 0.281632632017, 0, 0.373469382524, 0, 0.44693878293, 0, -0.0857142880559, 0.621428608894, -0.0696428567171, -0.00612244941294, -0.0834183692932, 0.067346945405, 0.293877571821, -0.0336734727025, 0.146938771009 };
static const double rnn_y_h[] = { 0, 0, 0, 0.281632632017, 0, 0.373469382524, 0, 0.44693878293, 0, 0.316530942917, -0.0257939845324, 0.187321305275, -0.0149001758546, -0.10407692939, -0.0157026574016, 0.386346995831, -0.0333729051054, 0.0568738132715 };
static const double lstm2_y[] = { 0.180756792426, 0.170840486884, 0.433892846107, 0.274290919304, 0.296642422676, 0.24471385777, 0.198953583837, 0.194659888744, 0.404078751802, 0.325542420149, 0.288835942745, 0.180489331484, 0.211752593517, 0.16291923821, 0.33783480525, 0.495737761259, 0.135417208076, 0.214022293687, 0.225550755858, 0.17685559392, 0.306153565645, 0.501059651375, 0.163670733571, 0.182704031467, 0.220809295774, 0.233120769262, 0.308788567781, 0.504777491093, 0.190269008279, 0.149664238095, 0.235225439072, 0.255575537682, 0.270341813564, 0.202504262328, 0.165579602122, 0.374918758869 };
static const double lstm2_y_h[] = { 0.504777491093, 0.190269008279, 0.149664238095, 0.235225439072, 0.255575537682, 0.270341813564, 0.202504262328, 0.165579602122, 0.374918758869 };
static const double lstm2_y_c[] = { 0.117079086602, 0.264910757542, -0.272954940796, 0.105374291539, 0.164924353361, -0.121220290661, 0.201821640134, 0.0820127725601, -0.189069569111 };

/* Deterministic inputs in [-scale, scale], computed in double as the generator did (no libm needed). */
static OwbTensor *
fill (OwbDataType dtype, int rank, const int64_t *dims, int k, double scale)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  g_assert_nonnull (t);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, (((i * 37 + k * 11) % 29) / 14.0 - 1.0) * scale);
  return t;
}

static void
set_strings (OwbNode *node, const char *name, const char *const *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_STRINGS);
  a->n = (int) g_strv_length ((char **) v);
  a->strings = g_strdupv ((char **) v);
}

static const char *const input_names[] = { "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P" };
static const char *const output_names[] = { "Y", "Y_h", "Y_c" };

/* Runs a one-node model. inputs: 8 slots (NULL = missing; those after the last given are left
 * out); outputs: n_outputs slots, each receives a tensor, or stays NULL where want[i] is FALSE (the
 * node's output is then ""). const_mask: inputs given as initializers (W this way is packed once
 * for the input projection). Takes the node. */
static gboolean
run_node_const (OwbNode *node, int opset, OwbTensor **inputs, guint const_mask, int n_outputs, const gboolean *want,
                OwbTensor **outputs, GError **error)
{
  int last = 0;
  for (int i = 0; i < 8; i++)
    if (inputs[i])
      last = i + 1;
  return run_wired_node (node, opset, input_names, last, inputs, const_mask, output_names, n_outputs, want, outputs,
                         error);
}

static gboolean
run_node (OwbNode *node, int opset, OwbTensor **inputs, int n_outputs, const gboolean *want, OwbTensor **outputs,
          GError **error)
{
  return run_node_const (node, opset, inputs, 0, n_outputs, want, outputs, error);
}

static void
free_tensors (OwbTensor **t, int n)
{
  for (int i = 0; i < n; i++)
    g_clear_pointer (&t[i], owb_tensor_unref);
}

static void
assert_close (const OwbTensor *t, int rank, const int64_t *dims, const double *expected, double tolerance)
{
  g_assert_nonnull (t);
  g_assert_cmpint (t->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (t->dims[i], ==, dims[i]);
  for (int64_t i = 0; i < t->nelems; i++)
    if (!(ABS (owb_tensor_get_double (t, i) - expected[i]) <= tolerance))
      g_error ("element %" G_GINT64_FORMAT ": %.9g, expected %.9g", i, owb_tensor_get_double (t, i), expected[i]);
}

/* Swaps the first two axes of a rank-3 or rank-4 tensor (seq-major <-> batch-major). */
static OwbTensor *
swap01 (const OwbTensor *t)
{
  int64_t dims[4];
  memcpy (dims, t->dims, sizeof dims);
  dims[0] = t->dims[1], dims[1] = t->dims[0];
  OwbTensor *out = owb_tensor_new (t->dtype, t->rank, dims, NULL);
  int64_t inner = t->nelems / MAX (1, t->dims[0] * t->dims[1]);
  for (int64_t a = 0; a < t->dims[0]; a++)
    for (int64_t b = 0; b < t->dims[1]; b++)
      for (int64_t k = 0; k < inner; k++)
        owb_tensor_set_double (out, (b * t->dims[0] + a) * inner + k,
                               owb_tensor_get_double (t, (a * t->dims[1] + b) * inner + k));
  return out;
}

static double *
swap01_values (const double *v, int64_t d0, int64_t d1, int64_t inner)
{
  double *out = g_new (double, d0 * d1 * inner);
  for (int64_t a = 0; a < d0; a++)
    for (int64_t b = 0; b < d1; b++)
      memcpy (out + (b * d0 + a) * inner, v + (a * d1 + b) * inner, inner * sizeof (double));
  return out;
}

enum { S = 4, NB = 3, I = 2, H = 3 };
static const int32_t seq_lens_a[NB] = { 4, 1, 2 };
static const int32_t seq_lens_b[NB] = { 3, 0, 4 };
static const gboolean want_all[3] = { TRUE, TRUE, TRUE };

/* The form PyTorch exports for nn.GRU: linear_before_reset, biases, initial state; here also ragged
 * sequence lengths. Opset 14 seq-major, and the same data batch-major (layout 1). */
static void
test_gru_bidirectional (gconstpointer data)
{
  int layout = GPOINTER_TO_INT (data);
  int64_t x_dims[] = { S, NB, I }, w_dims[] = { 2, 3 * H, I }, r_dims[] = { 2, 3 * H, H }, b_dims[] = { 2, 6 * H };
  int64_t h_dims[] = { 2, NB, H };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_FLOAT, 3, x_dims, 0, 1.0), fill (OWB_TYPE_FLOAT, 3, w_dims, 1, 0.6),
    fill (OWB_TYPE_FLOAT, 3, r_dims, 2, 0.5), fill (OWB_TYPE_FLOAT, 2, b_dims, 3, 0.3),
    tu_vector (OWB_TYPE_INT32, NB, seq_lens_a), fill (OWB_TYPE_FLOAT, 3, h_dims, 4, 0.4),
  };
  g_autofree double *y_expected = NULL, *y_h_expected = NULL;
  int64_t y_dims[] = { S, 2, NB, H }, y_h_dims[] = { 2, NB, H };
  if (layout == 1)
    {
      OwbTensor *x = swap01 (in[0]), *h0 = swap01 (in[5]);
      owb_tensor_unref (in[0]);
      owb_tensor_unref (in[5]);
      in[0] = x, in[5] = h0;
      /* Y [S, 2, NB, H], read as [S * 2, NB, H], becomes [NB, S, 2, H]. */
      y_expected = swap01_values (gru_y, S * 2, NB, H);
      y_h_expected = swap01_values (gru_y_h, 2, NB, H);
      int64_t yd[] = { NB, S, 2, H }, yhd[] = { NB, 2, H };
      memcpy (y_dims, yd, sizeof yd);
      memcpy (y_h_dims, yhd, sizeof yhd);
    }
  else
    {
      y_expected = g_memdup2 (gru_y, sizeof gru_y);
      y_h_expected = g_memdup2 (gru_y_h, sizeof gru_y_h);
    }

  OwbNode *node = owb_node_new ("GRU", "", "gru");
  tu_set_int (node, "hidden_size", H);
  tu_set_string (node, "direction", "bidirectional");
  tu_set_int (node, "linear_before_reset", 1);
  tu_set_int (node, "layout", layout);
  OwbTensor *out[2] = { NULL };
  g_autoptr (GError) error = NULL;
  gboolean ok = run_node (node, 14, in, 2, want_all, out, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  assert_close (out[0], 4, y_dims, y_expected, 2e-6);
  assert_close (out[1], 3, y_h_dims, y_h_expected, 2e-6);
  free_tensors (out, 2);
  free_tensors (in, 8);
}

/* linear_before_reset = 0 (the candidate sees r (.) h), reverse, clip, float64, no bias, Y unused. */
static void
test_gru_reverse_clip_double (void)
{
  int64_t x_dims[] = { S, NB, I }, w_dims[] = { 1, 3 * H, I }, r_dims[] = { 1, 3 * H, H };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_DOUBLE, 3, x_dims, 0, 1.0), NULL, NULL, NULL, tu_vector (OWB_TYPE_INT32, NB, seq_lens_a),
  };
  /* The generator scaled the float32-rounded weights by 3. */
  OwbTensor *w = fill (OWB_TYPE_FLOAT, 3, w_dims, 1, 0.6), *r = fill (OWB_TYPE_FLOAT, 3, r_dims, 2, 0.5);
  in[1] = owb_tensor_cast (w, OWB_TYPE_DOUBLE, NULL);
  in[2] = owb_tensor_cast (r, OWB_TYPE_DOUBLE, NULL);
  for (int64_t i = 0; i < in[1]->nelems; i++)
    ((double *) in[1]->data)[i] *= 3;
  for (int64_t i = 0; i < in[2]->nelems; i++)
    ((double *) in[2]->data)[i] *= 3;
  owb_tensor_unref (w);
  owb_tensor_unref (r);

  OwbNode *node = owb_node_new ("GRU", "", "gru");
  tu_set_int (node, "hidden_size", H);
  tu_set_string (node, "direction", "reverse");
  tu_set_float (node, "clip", 0.7f);
  const gboolean want[2] = { TRUE, TRUE };
  OwbTensor *out[2] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 7, in, 2, want, out, &error));
  g_assert_no_error (error);
  int64_t y_dims[] = { S, 1, NB, H }, y_h_dims[] = { 1, NB, H };
  assert_close (out[0], 4, y_dims, gru2_y, 1e-9);
  assert_close (out[1], 3, y_h_dims, gru2_y_h, 1e-9);
  free_tensors (out, 2);
  free_tensors (in, 8);
}

/* Peepholes, initial h and c, a zero-length sequence (zero states, as ONNX Runtime gives), float64. */
static void
test_lstm_bidirectional (void)
{
  int64_t x_dims[] = { S, NB, I }, w_dims[] = { 2, 4 * H, I }, r_dims[] = { 2, 4 * H, H }, b_dims[] = { 2, 8 * H };
  int64_t h_dims[] = { 2, NB, H }, p_dims[] = { 2, 3 * H };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_DOUBLE, 3, x_dims, 5, 1.0), fill (OWB_TYPE_DOUBLE, 3, w_dims, 6, 0.6),
    fill (OWB_TYPE_DOUBLE, 3, r_dims, 7, 0.5), fill (OWB_TYPE_DOUBLE, 2, b_dims, 8, 0.3),
    tu_vector (OWB_TYPE_INT32, NB, seq_lens_b), fill (OWB_TYPE_DOUBLE, 3, h_dims, 9, 0.4),
    fill (OWB_TYPE_DOUBLE, 3, h_dims, 10, 0.4), fill (OWB_TYPE_DOUBLE, 2, p_dims, 11, 0.3),
  };
  OwbNode *node = owb_node_new ("LSTM", "", "lstm");
  tu_set_int (node, "hidden_size", H);
  tu_set_string (node, "direction", "bidirectional");
  OwbTensor *out[3] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 22, in, 3, want_all, out, &error));
  g_assert_no_error (error);
  int64_t y_dims[] = { S, 2, NB, H };
  assert_close (out[0], 4, y_dims, lstm_y, 1e-9);
  assert_close (out[1], 3, h_dims, lstm_y_h, 1e-9);
  assert_close (out[2], 3, h_dims, lstm_y_c, 1e-9);
  free_tensors (out, 3);
  free_tensors (in, 8);
}

/* input_forget, clip, and activations with alpha/beta consumed in order; only Y_c requested. */
static void
test_lstm_activations (void)
{
  int64_t x_dims[] = { S, NB, I }, w_dims[] = { 1, 4 * H, I }, r_dims[] = { 1, 4 * H, H }, b_dims[] = { 1, 8 * H };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_FLOAT, 3, x_dims, 0, 1.0), fill (OWB_TYPE_FLOAT, 3, w_dims, 14, 0.8),
    fill (OWB_TYPE_FLOAT, 3, r_dims, 15, 0.7), fill (OWB_TYPE_FLOAT, 2, b_dims, 16, 0.3),
  };
  for (int pass = 0; pass < 2; pass++)
    {
      OwbNode *node = owb_node_new ("LSTM", "", "lstm");
      tu_set_int (node, "hidden_size", H);
      tu_set_int (node, "input_forget", 1);
      tu_set_float (node, "clip", 0.9f);
      /* Case does not matter in activation names. */
      const char *const acts[] = { pass ? "hardsigmoid" : "HardSigmoid", "Softsign", "Softplus", NULL };
      set_strings (node, "activations", acts);
      const float alpha[] = { 0.3f }, beta[] = { 0.4f };
      tu_set_floats (node, "activation_alpha", 1, alpha);
      tu_set_floats (node, "activation_beta", 1, beta);
      const gboolean want_all_pass[3] = { TRUE, TRUE, TRUE }, want_c[3] = { FALSE, FALSE, TRUE };
      OwbTensor *out[3] = { NULL };
      g_autoptr (GError) error = NULL;
      g_assert_true (run_node (node, 14, in, 3, pass ? want_c : want_all_pass, out, &error));
      g_assert_no_error (error);
      int64_t y_dims[] = { S, 1, NB, H }, h_dims[] = { 1, NB, H };
      if (!pass)
        {
          assert_close (out[0], 4, y_dims, lstm2_y, 2e-6);
          assert_close (out[1], 3, h_dims, lstm2_y_h, 2e-6);
        }
      assert_close (out[2], 3, h_dims, lstm2_y_c, 2e-6);
      free_tensors (out, 3);
    }
  free_tensors (in, 8);
}

/* One activation per direction; LeakyRelu takes the only alpha; no hidden_size attribute (taken from R). */
static void
test_rnn_bidirectional (void)
{
  int64_t x_dims[] = { S, NB, I }, w_dims[] = { 2, H, I }, r_dims[] = { 2, H, H };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_FLOAT, 3, x_dims, 0, 1.0), fill (OWB_TYPE_FLOAT, 3, w_dims, 12, 0.6),
    fill (OWB_TYPE_FLOAT, 3, r_dims, 13, 0.5),
  };
  OwbNode *node = owb_node_new ("RNN", "", "rnn");
  tu_set_string (node, "direction", "bidirectional");
  const char *const acts[] = { "Relu", "LeakyRelu", NULL };
  set_strings (node, "activations", acts);
  const float alpha[] = { 0.25f };
  tu_set_floats (node, "activation_alpha", 1, alpha);
  OwbTensor *out[2] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 14, in, 2, want_all, out, &error));
  g_assert_no_error (error);
  int64_t y_dims[] = { S, 2, NB, H }, h_dims[] = { 2, NB, H };
  assert_close (out[0], 4, y_dims, rnn_y, 2e-6);
  assert_close (out[1], 3, h_dims, rnn_y_h, 2e-6);
  free_tensors (out, 2);
  free_tensors (in, 8);
}

/* A GRU node with the given attribute spoiled; returns the error of session creation or run. */
typedef void (*Spoil) (OwbNode *node, OwbTensor **in);

static void spoil_direction (OwbNode *n, OwbTensor **in) { tu_set_string (n, "direction", "sideways"); }
static void spoil_activation_count (OwbNode *n, OwbTensor **in)
{
  const char *const acts[] = { "Sigmoid", NULL };
  set_strings (n, "activations", acts);
}
static void spoil_activation_name (OwbNode *n, OwbTensor **in)
{
  const char *const acts[] = { "Sigmoid", "Swish", NULL };
  set_strings (n, "activations", acts);
}
static void spoil_hidden_size (OwbNode *n, OwbTensor **in) { tu_set_int (n, "hidden_size", H + 1); }
static void spoil_negative_hidden_size (OwbNode *n, OwbTensor **in) { tu_set_int (n, "hidden_size", -3); }
static void spoil_layout (OwbNode *n, OwbTensor **in) { tu_set_int (n, "layout", 2); }
static void spoil_clip (OwbNode *n, OwbTensor **in) { tu_set_float (n, "clip", -1.f); }
static void spoil_lbr (OwbNode *n, OwbTensor **in) { tu_set_int (n, "linear_before_reset", 5); }
static void spoil_seq_lens (OwbNode *n, OwbTensor **in)
{
  const int32_t lens[NB] = { 1, S + 1, 2 };
  in[4] = tu_vector (OWB_TYPE_INT32, NB, lens);
}
static void spoil_negative_seq_lens (OwbNode *n, OwbTensor **in)
{
  const int32_t lens[NB] = { 1, -1, 2 };
  in[4] = tu_vector (OWB_TYPE_INT32, NB, lens);
}
static void spoil_bias_shape (OwbNode *n, OwbTensor **in)
{
  int64_t dims[] = { 1, 5 * H };
  in[3] = fill (OWB_TYPE_FLOAT, 2, dims, 0, 1.0);
}
static void spoil_w_type (OwbNode *n, OwbTensor **in)
{
  OwbTensor *w = owb_tensor_cast (in[1], OWB_TYPE_DOUBLE, NULL);
  owb_tensor_unref (in[1]);
  in[1] = w;
}

static void
test_errors (void)
{
  static const struct {
    Spoil spoil;
    int code;
  } cases[] = {
    { spoil_direction, OWB_ERROR_INVALID_MODEL },   { spoil_activation_count, OWB_ERROR_INVALID_MODEL },
    { spoil_activation_name, OWB_ERROR_INVALID_MODEL }, { spoil_hidden_size, OWB_ERROR_SHAPE },
    { spoil_negative_hidden_size, OWB_ERROR_INVALID_MODEL }, { spoil_layout, OWB_ERROR_INVALID_MODEL },
    { spoil_clip, OWB_ERROR_INVALID_MODEL },        { spoil_lbr, OWB_ERROR_INVALID_MODEL },
    { spoil_seq_lens, OWB_ERROR_INVALID_ARGUMENT }, { spoil_negative_seq_lens, OWB_ERROR_INVALID_ARGUMENT },
    { spoil_bias_shape, OWB_ERROR_SHAPE },          { spoil_w_type, OWB_ERROR_TYPE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      int64_t x_dims[] = { S, NB, I }, w_dims[] = { 1, 3 * H, I }, r_dims[] = { 1, 3 * H, H };
      OwbTensor *in[8] = {
        fill (OWB_TYPE_FLOAT, 3, x_dims, 0, 1.0), fill (OWB_TYPE_FLOAT, 3, w_dims, 1, 0.6),
        fill (OWB_TYPE_FLOAT, 3, r_dims, 2, 0.5),
      };
      OwbNode *node = owb_node_new ("GRU", "", "gru");
      tu_set_int (node, "hidden_size", H);
      cases[c].spoil (node, in);
      OwbTensor *out[2] = { NULL };
      g_autoptr (GError) error = NULL;
      g_assert_false (run_node (node, 14, in, 2, want_all, out, &error));
      g_assert_nonnull (error);
      g_test_message ("case %u: %s", c, error->message);
      g_assert_error (error, OWB_ERROR, cases[c].code);
      free_tensors (out, 2);
      free_tensors (in, 8);
    }
}

/* Symbolic dims pass through to the outputs; hidden size comes from R when the attribute is absent. */
static void
test_infer_symbolic (void)
{
  const char *batch = g_intern_string ("batch"), *seq = g_intern_string ("seq"), *hid = g_intern_string ("hid");
  for (int layout = 0; layout <= 1; layout++)
    {
      g_autoptr (OwbNode) node = owb_node_new ("LSTM", "", "lstm");
      tu_set_string (node, "direction", "bidirectional");
      tu_set_int (node, "layout", layout);
      for (int i = 0; i < 3; i++)
        owb_node_add_input (node, input_names[i]);
      for (int i = 0; i < 3; i++)
        owb_node_add_output (node, output_names[i]);
      OwbValueType types[3] = { layout == 0 ? VT (OWB_TYPE_FLOAT16, "seq", "batch", "4")
                                            : VT (OWB_TYPE_FLOAT16, "batch", "seq", "4"),
                                VT (OWB_TYPE_FLOAT16, "2", "?", "4"), VT (OWB_TYPE_FLOAT16, "2", "?", "hid") };
      OwbValueType outputs[3];
      g_autoptr (GError) error = NULL;
      g_assert_true (infer_node (node, 14, types, NULL, outputs, &error));
      g_assert_no_error (error);
      g_assert_cmpint (outputs[0].rank, ==, 4);
      g_assert_cmpint (outputs[0].dtype, ==, OWB_TYPE_FLOAT16);
      const char *y_params[2][4] = { { seq, NULL, batch, hid }, { batch, seq, NULL, hid } };
      for (int k = 0; k < 4; k++)
        g_assert_true (outputs[0].dims[k].param == y_params[layout][k]);
      g_assert_cmpint (outputs[0].dims[layout == 0 ? 1 : 2].value, ==, 2);
      for (int o = 1; o < 3; o++)
        {
          g_assert_cmpint (outputs[o].rank, ==, 3);
          g_assert_true (outputs[o].dims[layout == 0 ? 1 : 0].param == batch);
          g_assert_cmpint (outputs[o].dims[layout == 0 ? 0 : 1].value, ==, 2);
          g_assert_true (outputs[o].dims[2].param == hid);
        }
    }

  /* Before opset 14 there is no layout: the attribute is ignored and X stays seq-major. */
  g_autoptr (OwbNode) node = owb_node_new ("RNN", "", "rnn");
  tu_set_int (node, "hidden_size", 5);
  tu_set_int (node, "layout", 1);
  for (int i = 0; i < 3; i++)
    owb_node_add_input (node, input_names[i]);
  owb_node_add_output (node, "Y");
  OwbValueType types[3] = { VT (OWB_TYPE_DOUBLE, "7", "2", "4"), VT (OWB_TYPE_DOUBLE, "1", "5", "4"),
                            VT (OWB_TYPE_DOUBLE, "1", "5", "5") };
  OwbValueType outputs[1];
  g_autoptr (GError) error = NULL;
  g_assert_true (infer_node (node, 7, types, NULL, outputs, &error));
  g_assert_no_error (error);
  const int64_t want[4] = { 7, 1, 2, 5 };
  for (int k = 0; k < 4; k++)
    g_assert_cmpint (outputs[0].dims[k].value, ==, want[k]);
}

/* float runs the per-step products of up to 4 batch rows and the sigmoid/tanh gates on vector
 * kernels (cpu-gemv.c), and with a constant W the input projection on cpu-sgemm.c's packed W (its
 * biases in the epilogue); double keeps BLAS and libm. The two must agree on sizes with every tail
 * (H = 37, I = 19) and on the batch sizes either side of the GEMV limit (1, 2, 4, 5). */
static void
check_float_matches_double (int64_t S2, int64_t I2, int64_t H2, const int64_t *batches, guint n_batches)
{
  const struct {
    const char *op;
    int gates, lbr;
  } cells[] = { { "GRU", 3, 0 }, { "GRU", 3, 1 }, { "LSTM", 4, 0 }, { "RNN", 1, 0 } };
  for (guint c = 0; c < G_N_ELEMENTS (cells); c++)
    for (guint bi = 0; bi < n_batches; bi++)
      {
        int64_t nb = batches[bi], g = cells[c].gates;
        int64_t x_dims[] = { S2, nb, I2 }, w_dims[] = { 2, g * H2, I2 }, r_dims[] = { 2, g * H2, H2 };
        int64_t b_dims[] = { 2, 2 * g * H2 }, h_dims[] = { 2, nb, H2 };
        /* Scales that reach both the saturated and the near-zero ranges of sigmoid and tanh. */
        OwbTensor *in_d[8] = {
          fill (OWB_TYPE_DOUBLE, 3, x_dims, 1, 2.0), fill (OWB_TYPE_DOUBLE, 3, w_dims, 2, 0.4),
          fill (OWB_TYPE_DOUBLE, 3, r_dims, 3, 0.3), fill (OWB_TYPE_DOUBLE, 2, b_dims, 4, 0.5), NULL,
          fill (OWB_TYPE_DOUBLE, 3, h_dims, 5, 0.4),
        };
        OwbTensor *in_f[8] = { NULL };
        for (int i = 0; i < 8; i++)
          if (in_d[i])
            {
              /* Round the data to float first so that both runs see the same numbers. */
              in_f[i] = owb_tensor_cast (in_d[i], OWB_TYPE_FLOAT, NULL);
              owb_tensor_unref (in_d[i]);
              in_d[i] = owb_tensor_cast (in_f[i], OWB_TYPE_DOUBLE, NULL);
            }
        /* float with W and B fed, float with them constant (W packed for the input projection), double */
        OwbTensor *out_f[2] = { NULL }, *out_c[2] = { NULL }, *out_d[2] = { NULL };
        for (int pass = 0; pass < 3; pass++)
          {
            OwbNode *node = owb_node_new (cells[c].op, "", "cell");
            tu_set_int (node, "hidden_size", H2);
            tu_set_string (node, "direction", "bidirectional");
            if (cells[c].lbr)
              tu_set_int (node, "linear_before_reset", 1);
            g_autoptr (GError) error = NULL;
            OwbTensor **out = pass == 0 ? out_f : pass == 1 ? out_c : out_d;
            guint const_mask = pass == 1 ? (1u << 1) | (1u << 3) : 0;
            g_assert_true (run_node_const (node, 14, pass == 2 ? in_d : in_f, const_mask, 2, want_all, out, &error));
            g_assert_no_error (error);
          }
        for (int o = 0; o < 2; o++)
          {
            g_autofree double *want = g_new (double, out_d[o]->nelems);
            for (int64_t i = 0; i < out_d[o]->nelems; i++)
              want[i] = owb_tensor_get_double (out_d[o], i);
            assert_close (out_f[o], out_d[o]->rank, out_d[o]->dims, want, 1e-5);
            assert_close (out_c[o], out_d[o]->rank, out_d[o]->dims, want, 1e-5);
          }
        free_tensors (out_f, 2);
        free_tensors (out_c, 2);
        free_tensors (out_d, 2);
        free_tensors (in_f, 8);
        free_tensors (in_d, 8);
      }
}

static void
test_float_matches_double (void)
{
  check_float_matches_double (6, 19, 37, (const int64_t[]){ 1, 2, 4, 5 }, 4);
  /* Large enough (over 1M multiply-adds) for the input projection to be split over the threads. */
  check_float_matches_double (40, 128, 64, (const int64_t[]){ 1, 3 }, 2);
}

/* The input projection of all steps is split by columns over the threads when it is large. With
 * R = 0 and the Affine activation an RNN's Y is just X W^T + Wb + Rb, checked against a plain sum. */
static void
test_projection_split (void)
{
  enum { S3 = 40, B3 = 3, I3 = 128, H3 = 64 };
  int64_t x_dims[] = { S3, B3, I3 }, w_dims[] = { 2, H3, I3 }, r_dims[] = { 2, H3, H3 }, b_dims[] = { 2, 2 * H3 };
  OwbTensor *in[8] = {
    fill (OWB_TYPE_FLOAT, 3, x_dims, 1, 1.0), fill (OWB_TYPE_FLOAT, 3, w_dims, 2, 0.3),
    owb_tensor_new (OWB_TYPE_FLOAT, 3, r_dims, NULL), fill (OWB_TYPE_FLOAT, 2, b_dims, 3, 0.5),
  };
  memset (in[2]->data, 0, in[2]->nbytes);
  OwbNode *node = owb_node_new ("RNN", "", "rnn");
  tu_set_int (node, "hidden_size", H3);
  tu_set_string (node, "direction", "bidirectional");
  const char *const acts[] = { "Affine", "Affine", NULL };
  set_strings (node, "activations", acts);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 14, in, 1, want_all, out, &error));
  g_assert_no_error (error);
  g_autofree double *want = g_new (double, S3 * 2 * B3 * H3);
  for (int64_t t = 0; t < S3; t++)
    for (int64_t d = 0; d < 2; d++)
      for (int64_t b = 0; b < B3; b++)
        for (int64_t j = 0; j < H3; j++)
          {
            double v = owb_tensor_get_double (in[3], d * 2 * H3 + j) + owb_tensor_get_double (in[3], d * 2 * H3 + H3 + j);
            for (int64_t k = 0; k < I3; k++)
              v += owb_tensor_get_double (in[0], (t * B3 + b) * I3 + k) * owb_tensor_get_double (in[1], (d * H3 + j) * I3 + k);
            want[((t * 2 + d) * B3 + b) * H3 + j] = v;
          }
  int64_t y_dims[] = { S3, 2, B3, H3 };
  assert_close (out[0], 4, y_dims, want, 1e-4);
  free_tensors (out, 1);
  free_tensors (in, 8);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/rnn/gru/bidirectional-seq-lens", GINT_TO_POINTER (0), test_gru_bidirectional);
  g_test_add_data_func ("/rnn/gru/bidirectional-batch-major", GINT_TO_POINTER (1), test_gru_bidirectional);
  g_test_add_func ("/rnn/gru/reverse-clip-double", test_gru_reverse_clip_double);
  g_test_add_func ("/rnn/lstm/bidirectional-peepholes", test_lstm_bidirectional);
  g_test_add_func ("/rnn/lstm/activations", test_lstm_activations);
  g_test_add_func ("/rnn/rnn/bidirectional", test_rnn_bidirectional);
  g_test_add_func ("/rnn/float-matches-double", test_float_matches_double);
  g_test_add_func ("/rnn/projection-split", test_projection_split);
  g_test_add_func ("/rnn/errors", test_errors);
  g_test_add_func ("/rnn/infer/symbolic", test_infer_symbolic);
  return g_test_run ();
}
