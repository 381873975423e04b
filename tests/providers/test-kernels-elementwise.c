/* test-kernels-elementwise.c: elementwise ops on the CPU provider beyond the conformance cases:
 * general broadcasting (threaded), legacy broadcast, integer edge cases, attribute and shape errors,
 * symbolic inference, Clip/Where/Pow/variadic forms and Cast conversions. */
#include <math.h>
#include <string.h>

#include "../engine/test-util.h"
#include "kernel-test-util.h"

typedef void (*NodeSetup) (OwbNode *node);

static OwbTensor *
make_strings (int rank, const int64_t *dims, const char *const *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_STRING, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    ((char **) t->data)[i] = g_strdup (values[i]);
  return t;
}

/* Runs one node of `op` on graph inputs i0..i{n-1} (NULL: a missing optional input) and returns
 * its output y, or NULL with the error. */
static OwbTensor *
run_op (int opset, const char *op, int n_in, OwbTensor *const *inputs, NodeSetup setup, int threads, GError **error)
{
  g_autoptr (OwbModel) m = tu_model_new (opset);
  g_autofree char *names = tu_add_indexed_inputs (m->graph, n_in, inputs, 0);
  add_node_to_y (m, op, names, setup);
  g_autoptr (OwbSession) s = tu_session (m, threads, error);
  if (!s)
    return NULL;
  OwbTensor *out = NULL;
  const char *out_name = "y";
  if (!tu_run_indexed (s, n_in, inputs, 0, 1, &out_name, &out, error))
    return NULL;
  return out;
}

static OwbTensor *
run_ok (int opset, const char *op, int n_in, OwbTensor *const *inputs, NodeSetup setup)
{
  GError *error = NULL;
  OwbTensor *y = run_op (opset, op, n_in, inputs, setup, 1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (y);
  return y;
}

static void
assert_values (const OwbTensor *got, OwbDataType dtype, int rank, const int64_t *dims, const double *want, double tol)
{
  g_assert_nonnull (got);
  g_assert_cmpint (got->dtype, ==, dtype);
  g_assert_cmpint (got->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (got->dims[i], ==, dims[i]);
  for (int64_t i = 0; i < got->nelems; i++)
    {
      double g = owb_tensor_get_double (got, i);
      if (isnan (want[i]) ? !isnan (g) : fabs (g - want[i]) > tol * (1 + fabs (want[i])))
        g_error ("element %" G_GINT64_FORMAT ": got %.10g, want %.10g", i, g, want[i]);
    }
}

/* ---- inference helpers ---- */

typedef struct {
  OwbDataType dtype;
  int rank; /* -1: unknown rank */
  int64_t dims[4]; /* -2: the symbolic dim "batch", -1: unknown */
} In;

static char *
infer_text (int opset, const char *op, int n_in, const In *ins, NodeSetup setup, GError **error)
{
  g_autoptr (OwbModel) m = tu_model_new (opset);
  const char *params[] = { "batch", "batch", "batch", "batch" };
  GString *names = g_string_new (NULL);
  for (int i = 0; i < n_in; i++)
    {
      char name[8];
      g_snprintf (name, sizeof name, "i%d", i);
      g_string_append_printf (names, "%s%s", i ? "," : "", name);
      tu_add_value (m->graph->inputs, name, ins[i].dtype, MAX (ins[i].rank, 0), ins[i].dims, params);
      if (ins[i].rank < 0)
        ((OwbValueInfo *) g_ptr_array_index (m->graph->inputs, i))->type.rank = -1;
    }
  add_node_to_y (m, op, names->str, setup);
  g_string_free (names, TRUE);
  return infer_y_text (m, error);
}

static void
expect_type (int opset, const char *op, int n_in, const In *ins, NodeSetup setup, const char *want)
{
  GError *error = NULL;
  g_autofree char *t = infer_text (opset, op, n_in, ins, setup, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (t, ==, want);
}

static void
expect_error (int opset, const char *op, int n_in, const In *ins, NodeSetup setup, int code, const char *fragment)
{
  GError *error = NULL;
  g_autofree char *t = infer_text (opset, op, n_in, ins, setup, &error);
  if (t)
    g_error ("%s: expected an error containing '%s', inferred %s", op, fragment, t);
  g_assert_error (error, OWB_ERROR, code);
  if (!strstr (error->message, "the_node") || !strstr (error->message, fragment))
    g_error ("error '%s' lacks the node name or '%s'", error->message, fragment);
  g_error_free (error);
}

/* ---- general broadcasting against a naive reference ---- */

static double
reference (const char *op, double a, double b)
{
  if (strcmp (op, "Add") == 0)
    return a + b;
  if (strcmp (op, "Sub") == 0)
    return a - b;
  if (strcmp (op, "Mul") == 0)
    return a * b;
  return a / b;
}

/* Element of `t` (right-aligned against out dims) at the output coordinate. */
static double
broadcast_get (const OwbTensor *t, int out_rank, const int64_t *coord)
{
  int64_t flat = 0;
  for (int i = 0; i < t->rank; i++)
    {
      int64_t c = coord[out_rank - t->rank + i];
      flat = flat * t->dims[i] + (t->dims[i] == 1 ? 0 : c);
    }
  return owb_tensor_get_double (t, flat);
}

/* Integer results truncate toward zero and wrap to the type's width. */
static double
wrap (OwbDataType dtype, double v)
{
  int64_t i = (int64_t) v;
  switch (dtype)
    {
    case OWB_TYPE_INT8: return (int8_t) i;
    case OWB_TYPE_INT16: return (int16_t) i;
    case OWB_TYPE_INT32: return (int32_t) i;
    case OWB_TYPE_UINT8: return (uint8_t) i;
    case OWB_TYPE_UINT16: return (uint16_t) i;
    case OWB_TYPE_UINT32: return (uint32_t) i;
    case OWB_TYPE_INT64: return (double) i;
    default: return v;
    }
}

static void
check_broadcast (const char *op, OwbDataType dtype, int ra, const int64_t *da, int rb, const int64_t *db, int threads)
{
  GRand *rand = g_rand_new_with_seed (42);
  OwbTensor *in[2] = { tensor (dtype, ra, da, NULL), tensor (dtype, rb, db, NULL) };
  for (int k = 0; k < 2; k++)
    for (int64_t i = 0; i < in[k]->nelems; i++)
      {
        /* A in [51, 100] (negated for signed types), B in [1, 50]: no unsigned wrap-around. */
        gboolean is_unsigned = dtype == OWB_TYPE_UINT8 || dtype == OWB_TYPE_UINT16 || dtype == OWB_TYPE_UINT32
                               || dtype == OWB_TYPE_UINT64;
        double v = k ? g_rand_int_range (rand, 1, 51) : g_rand_int_range (rand, 51, 101) * (is_unsigned ? 1 : -1);
        owb_tensor_set_double (in[k], i, v);
      }
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_op (14, op, 2, in, NULL, threads, &error);
  g_assert_no_error (error);
  int r = MAX (ra, rb);
  int64_t out[OWB_MAX_RANK], coord[OWB_MAX_RANK];
  for (int i = 0; i < r; i++)
    {
      int ia = i - (r - ra), ib = i - (r - rb);
      int64_t a = ia >= 0 ? da[ia] : 1, b = ib >= 0 ? db[ib] : 1;
      out[i] = a == 1 ? b : a;
      g_assert_cmpint (y->dims[i], ==, out[i]);
    }
  g_assert_cmpint (y->rank, ==, r);
  for (int64_t f = 0; f < y->nelems; f++)
    {
      int64_t rem = f;
      for (int i = r - 1; i >= 0; i--)
        {
          coord[i] = rem % out[i];
          rem /= out[i];
        }
      double want = reference (op, broadcast_get (in[0], r, coord), broadcast_get (in[1], r, coord));
      want = wrap (dtype, want);
      double got = owb_tensor_get_double (y, f);
      if (fabs (got - want) > 1e-5 * (1 + fabs (want)))
        g_error ("%s %s: element %" G_GINT64_FORMAT ": got %g, want %g", op, owb_data_type_name (dtype), f, got, want);
    }
  owb_tensor_unref (in[0]);
  owb_tensor_unref (in[1]);
  g_rand_free (rand);
}

static void
test_broadcast (void)
{
  const char *ops[] = { "Add", "Sub", "Mul", "Div" };
  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 1, 3 }, 2, (int64_t[]){ 4, 1 }, 1);
      check_broadcast (ops[o], OWB_TYPE_INT32, 3, (int64_t[]){ 5, 1, 7 }, 3, (int64_t[]){ 1, 6, 1 }, 1);
      check_broadcast (ops[o], OWB_TYPE_INT8, 0, NULL, 2, (int64_t[]){ 3, 4 }, 1);
      check_broadcast (ops[o], OWB_TYPE_DOUBLE, 2, (int64_t[]){ 3, 4 }, 1, (int64_t[]){ 1 }, 1);
      check_broadcast (ops[o], OWB_TYPE_UINT16, 4, (int64_t[]){ 2, 3, 1, 5 }, 4, (int64_t[]){ 2, 1, 4, 5 }, 1);
      /* Large enough to be split over threads, by rows and by flat ranges. */
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 3, (int64_t[]){ 64, 1, 300 }, 3, (int64_t[]){ 1, 50, 300 }, 4);
      check_broadcast (ops[o], OWB_TYPE_INT64, 3, (int64_t[]){ 40, 37, 3 }, 2, (int64_t[]){ 37, 1 }, 4);
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 1, (int64_t[]){ 100003 }, 1, (int64_t[]){ 1 }, 4);
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 2, (int64_t[]){ 311, 523 }, 2, (int64_t[]){ 311, 523 }, 4);
      /* A row repeated over the output (an NHWC squeeze-excite scale, a bias): float Mul and Add
       * run these rows in their own loop; channels a multiple of 8 and not, either side repeated. */
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 56, 56, 32 }, 4, (int64_t[]){ 1, 1, 1, 32 }, 4);
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 1, 1, 19 }, 4, (int64_t[]){ 1, 7, 7, 19 }, 1);
      check_broadcast (ops[o], OWB_TYPE_FLOAT, 2, (int64_t[]){ 5, 7 }, 1, (int64_t[]){ 7 }, 2);
    }
  /* Empty tensors broadcast to empty outputs. */
  check_broadcast ("Add", OWB_TYPE_FLOAT, 2, (int64_t[]){ 0, 3 }, 1, (int64_t[]){ 3 }, 1);
}

/* ---- legacy broadcast (opset < 7) ---- */

static void setup_broadcast_axis1 (OwbNode *n) { tu_set_int (n, "broadcast", 1); tu_set_int (n, "axis", 1); }
static void setup_broadcast (OwbNode *n) { tu_set_int (n, "broadcast", 1); }
static void setup_broadcast_axis2 (OwbNode *n) { tu_set_int (n, "broadcast", 1); tu_set_int (n, "axis", 2); }

static void
test_legacy_broadcast (void)
{
  /* B[3] lines up with A's axis 1, which numpy rules would refuse. */
  OwbTensor *in[2] = { tensor (OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 3, 2 }, NULL),
                       tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 10, 20, 30 }) };
  g_autoptr (OwbTensor) y = run_ok (6, "Add", 2, in, setup_broadcast_axis1);
  double want[12];
  for (int i = 0; i < 12; i++)
    want[i] = 10 * ((i / 2) % 3 + 1);
  assert_values (y, OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 3, 2 }, want, 0);
  owb_tensor_unref (in[1]);
  /* Without axis, B matches A's trailing dims. */
  in[1] = tensor (OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 2 }, (double[]){ 1, 2, 3, 4, 5, 6 });
  g_autoptr (OwbTensor) y2 = run_ok (6, "Mul", 2, in, setup_broadcast);
  g_assert_cmpfloat (owb_tensor_get_double (y2, 11), ==, 0);
  owb_tensor_unref (in[0]);
  owb_tensor_unref (in[1]);
  /* B does not fit A at axis 2. */
  In ins[2] = { { OWB_TYPE_FLOAT, 3, { 2, 3, 4 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_error (6, "Add", 2, ins, setup_broadcast_axis2, OWB_ERROR_SHAPE, "broadcast");
  In ins2[2] = { { OWB_TYPE_FLOAT, 3, { 2, 3, 4 } }, { OWB_TYPE_FLOAT, 2, { 3, 4 } } };
  expect_error (6, "Add", 2, ins2, setup_broadcast_axis2, OWB_ERROR_INVALID_MODEL, "axis");
}

/* PRelu before opset 7: a 1-D slope is per channel. */
static void
test_prelu_legacy (void)
{
  OwbTensor *in[2] = { tensor (OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 3, 2 }, (double[]){ -1, 1, -1, 1, -1, 1 }),
                       tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 0.1, 0.2, 0.3 }) };
  g_autoptr (OwbTensor) y = run_ok (6, "PRelu", 2, in, NULL);
  assert_values (y, OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 3, 2 }, (double[]){ -0.1, 1, -0.2, 1, -0.3, 1 }, 1e-6);
  owb_tensor_unref (in[0]);
  owb_tensor_unref (in[1]);
}

/* ---- integers ---- */

static void setup_fmod (OwbNode *n) { tu_set_int (n, "fmod", 1); }

static void
test_integer_edges (void)
{
  GError *error = NULL;
  OwbTensor *in[2] = { tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ G_MININT32, 7, -7 }),
                       tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ -1, -2, 2 }) };
  /* MIN / -1 wraps instead of trapping; division truncates toward zero. */
  g_autoptr (OwbTensor) q = run_ok (14, "Div", 2, in, NULL);
  assert_values (q, OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ G_MININT32, -3, -3 }, 0);
  g_autoptr (OwbTensor) r = run_ok (13, "Mod", 2, in, NULL);
  assert_values (r, OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ 0, -1, 1 }, 0);
  g_autoptr (OwbTensor) rf = run_ok (13, "Mod", 2, in, setup_fmod);
  assert_values (rf, OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ 0, 1, -1 }, 0);
  /* A zero divisor is an error, not a crash. */
  owb_tensor_set_double (in[1], 1, 0);
  g_assert_null (run_op (14, "Div", 2, in, NULL, 1, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "the_node"));
  g_clear_error (&error);
  g_assert_null (run_op (13, "Mod", 2, in, NULL, 1, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  owb_tensor_unref (in[0]);
  owb_tensor_unref (in[1]);

  /* Float Mod with fmod=0 takes the divisor's sign; exact zeros too. */
  OwbTensor *f[2] = { tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ -0.5, 4, 5.5 }),
                      tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 2, -2, -2 }) };
  g_autoptr (OwbTensor) fm = run_ok (28, "Mod", 2, f, NULL);
  assert_values (fm, OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 1.5, 0, -0.5 }, 0);
  g_assert_true (signbit (((float *) fm->data)[1]));
  owb_tensor_unref (f[0]);
  owb_tensor_unref (f[1]);

  /* Integer Pow, and Abs/Neg of the minimum wrap. */
  OwbTensor *p[2] = { tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, (double[]){ 3, -2, 2, 1 }),
                      tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, (double[]){ 4, 3, -1, -5 }) };
  g_autoptr (OwbTensor) pw = run_ok (15, "Pow", 2, p, NULL);
  assert_values (pw, OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, (double[]){ 81, -8, 0, 1 }, 0);
  owb_tensor_unref (p[0]);
  owb_tensor_unref (p[1]);
  /* Add, Sub and Mul of integers wrap (in C, int32/int64 overflow and uint16 x uint16, promoted to
   * int, are undefined). */
  OwbTensor *w[2] = { tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ G_MAXINT32, G_MININT32 }),
                      tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ 1, 2 }) };
  g_autoptr (OwbTensor) wa = run_ok (14, "Add", 2, w, NULL);
  assert_values (wa, OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ G_MININT32, G_MININT32 + 2 }, 0);
  g_autoptr (OwbTensor) ws = run_ok (14, "Sub", 2, w, NULL);
  assert_values (ws, OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ G_MAXINT32 - 1, G_MAXINT32 - 1 }, 0);
  g_autoptr (OwbTensor) wm = run_ok (14, "Mul", 2, w, NULL);
  assert_values (wm, OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ G_MAXINT32, 0 }, 0);
  owb_tensor_unref (w[0]);
  owb_tensor_unref (w[1]);
  OwbTensor *u16 = tensor (OWB_TYPE_UINT16, 1, (int64_t[]){ 1 }, (double[]){ 65535 });
  OwbTensor *uu[2] = { u16, u16 };
  g_autoptr (OwbTensor) um = run_ok (14, "Mul", 2, uu, NULL);
  assert_values (um, OWB_TYPE_UINT16, 1, (int64_t[]){ 1 }, (double[]){ 1 }, 0);
  owb_tensor_unref (u16);
  OwbTensor *m8 = tensor (OWB_TYPE_INT8, 1, (int64_t[]){ 2 }, (double[]){ -128, -5 });
  g_autoptr (OwbTensor) ab = run_ok (13, "Abs", 1, &m8, NULL);
  assert_values (ab, OWB_TYPE_INT8, 1, (int64_t[]){ 2 }, (double[]){ -128, 5 }, 0);
  owb_tensor_unref (m8);
}

/* ---- errors and inference ---- */

static void setup_gelu_bogus (OwbNode *n) { tu_set_string (n, "approximate", "erf"); }
static void setup_fmod2 (OwbNode *n) { tu_set_int (n, "fmod", 2); }
static void setup_direction_up (OwbNode *n) { tu_set_string (n, "direction", "UP"); }
static void setup_alpha0 (OwbNode *n) { tu_set_float (n, "alpha", 0); }
static void setup_to_999 (OwbNode *n) { tu_set_int (n, "to", 999); }
static void setup_to_string_bogus (OwbNode *n) { tu_set_string (n, "to", "QUATERNION"); }
static void setup_detect5 (OwbNode *n) { tu_set_int (n, "detect_negative", 5); }
static void setup_to_float16 (OwbNode *n) { tu_set_int (n, "to", OWB_TYPE_FLOAT16); }
static void setup_to_string_int32 (OwbNode *n) { tu_set_string (n, "to", "INT32"); }

static void
test_errors (void)
{
  const In f1[] = { { OWB_TYPE_FLOAT, 2, { 2, 3 } } };
  const In i2[] = { { OWB_TYPE_INT32, 1, { 3 } }, { OWB_TYPE_INT32, 1, { 3 } } };
  expect_error (20, "Gelu", 1, f1, setup_gelu_bogus, OWB_ERROR_INVALID_MODEL, "approximate");
  expect_error (13, "Mod", 2, i2, setup_fmod2, OWB_ERROR_INVALID_MODEL, "fmod");
  expect_error (11, "BitShift", 2, i2, setup_direction_up, OWB_ERROR_INVALID_MODEL, "direction");
  expect_error (11, "BitShift", 2, i2, NULL, OWB_ERROR_INVALID_MODEL, "direction");
  expect_error (12, "Celu", 1, f1, setup_alpha0, OWB_ERROR_INVALID_MODEL, "alpha");
  expect_error (13, "Cast", 1, f1, setup_to_999, OWB_ERROR_TYPE, "999");
  expect_error (13, "Cast", 1, f1, NULL, OWB_ERROR_INVALID_MODEL, "to");
  expect_error (1, "Cast", 1, f1, setup_to_string_bogus, OWB_ERROR_INVALID_MODEL, "QUATERNION");
  expect_error (20, "IsInf", 1, f1, setup_detect5, OWB_ERROR_INVALID_MODEL, "detect_negative");
  /* Mixed input types, and shapes that do not broadcast. */
  const In mixed[] = { { OWB_TYPE_INT32, 1, { 3 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_error (14, "Add", 2, mixed, NULL, OWB_ERROR_TYPE, "float");
  expect_error (13, "Equal", 2, mixed, NULL, OWB_ERROR_TYPE, "int32");
  expect_error (11, "Pow", 2, mixed, NULL, OWB_ERROR_TYPE, "float");
  const In bad[] = { { OWB_TYPE_FLOAT, 2, { 2, 3 } }, { OWB_TYPE_FLOAT, 1, { 4 } } };
  expect_error (14, "Add", 2, bad, NULL, OWB_ERROR_SHAPE, "broadcast");
  expect_error (13, "Max", 2, bad, NULL, OWB_ERROR_SHAPE, "broadcast");
  const In where_bad[] = { { OWB_TYPE_FLOAT, 1, { 3 } }, { OWB_TYPE_FLOAT, 1, { 3 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_error (16, "Where", 3, where_bad, NULL, OWB_ERROR_TYPE, "bool");
  const In not_bad[] = { { OWB_TYPE_INT32, 1, { 3 } } };
  expect_error (1, "Not", 1, not_bad, NULL, OWB_ERROR_TYPE, "bool");
  const In clip_bad[] = { { OWB_TYPE_FLOAT, 1, { 3 } }, { OWB_TYPE_FLOAT, 1, { 2 } } };
  expect_error (13, "Clip", 2, clip_bad, NULL, OWB_ERROR_SHAPE, "scalar");
  const In prelu_bad[] = { { OWB_TYPE_FLOAT, 2, { 2, 3 } }, { OWB_TYPE_FLOAT, 2, { 4, 3 } } };
  expect_error (16, "PRelu", 2, prelu_bad, NULL, OWB_ERROR_SHAPE, "slope");
}

static void
test_symbolic_inference (void)
{
  const In batch3_3[] = { { OWB_TYPE_FLOAT, 2, { -2, 3 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_type (14, "Add", 2, batch3_3, NULL, "float32[batch,3]");
  expect_type (13, "Less", 2, batch3_3, NULL, "bool[batch,3]");
  expect_type (13, "Sum", 2, batch3_3, NULL, "float32[batch,3]");
  expect_type (16, "PRelu", 2, batch3_3, NULL, "float32[batch,3]");
  /* A named dim against 1 stays named; against an unknown it is unknown. */
  const In vs1[] = { { OWB_TYPE_FLOAT, 2, { -2, 1 } }, { OWB_TYPE_FLOAT, 2, { 1, 5 } } };
  expect_type (14, "Mul", 2, vs1, NULL, "float32[batch,5]");
  const In where[] = { { OWB_TYPE_BOOL, 2, { -2, 1 } }, { OWB_TYPE_INT64, 2, { 1, 4 } }, { OWB_TYPE_INT64, 0, { 0 } } };
  expect_type (16, "Where", 3, where, NULL, "int64[batch,4]");
  const In unary[] = { { OWB_TYPE_FLOAT, 3, { -2, -1, 7 } } };
  expect_type (13, "Sigmoid", 1, unary, NULL, "float32[batch,?,7]");
  expect_type (20, "IsNaN", 1, unary, NULL, "bool[batch,?,7]");
  expect_type (19, "Cast", 1, unary, setup_to_float16, "float16[batch,?,7]");
  expect_type (1, "Cast", 1, unary, setup_to_string_int32, "int32[batch,?,7]");
  const In castlike[] = { { OWB_TYPE_FLOAT, 1, { -2 } }, { OWB_TYPE_BFLOAT16, 0, { 0 } } };
  expect_type (15, "CastLike", 2, castlike, NULL, "bfloat16[batch]");
  const In pow_mixed[] = { { OWB_TYPE_INT32, 1, { -2 } }, { OWB_TYPE_FLOAT, 0, { 0 } } };
  expect_type (15, "Pow", 2, pow_mixed, NULL, "int32[batch]");
  const In unknown_rank[] = { { OWB_TYPE_FLOAT, -1, { 0 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_type (14, "Add", 2, unknown_rank, NULL, "float32[?]");
  /* Legacy broadcast keeps A's shape. */
  const In legacy[] = { { OWB_TYPE_FLOAT, 3, { -2, 3, 4 } }, { OWB_TYPE_FLOAT, 1, { 3 } } };
  expect_type (6, "Sub", 2, legacy, setup_broadcast_axis1, "float32[batch,3,4]");
}

/* ---- Clip, Where, Pow, variadic ---- */

static void setup_clip6 (OwbNode *n) { tu_set_float (n, "min", -1); tu_set_float (n, "max", 2); }

static void
test_clip (void)
{
  OwbTensor *x = tensor (OWB_TYPE_INT8, 1, (int64_t[]){ 4 }, (double[]){ -100, -3, 5, 100 });
  OwbTensor *hi = tensor (OWB_TYPE_INT8, 0, NULL, (double[]){ 10 });
  OwbTensor *in[3] = { x, NULL, hi };
  g_autoptr (OwbTensor) y = run_ok (13, "Clip", 3, in, NULL);
  assert_values (y, OWB_TYPE_INT8, 1, (int64_t[]){ 4 }, (double[]){ -100, -3, 5, 10 }, 0);
  /* min > max gives max everywhere, like numpy. */
  OwbTensor *lo = tensor (OWB_TYPE_INT8, 0, NULL, (double[]){ 20 });
  in[1] = lo;
  g_autoptr (OwbTensor) y2 = run_ok (13, "Clip", 3, in, NULL);
  assert_values (y2, OWB_TYPE_INT8, 1, (int64_t[]){ 4 }, (double[]){ 10, 10, 10, 10 }, 0);
  owb_tensor_unref (x);
  owb_tensor_unref (lo);
  owb_tensor_unref (hi);
  /* Opset 6: bounds are attributes. */
  OwbTensor *f = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ -5, 0.5, 1.5, 5 });
  g_autoptr (OwbTensor) y3 = run_ok (6, "Clip", 1, &f, setup_clip6);
  assert_values (y3, OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ -1, 0.5, 1.5, 2 }, 0);
  owb_tensor_unref (f);
}

static void
test_where (void)
{
  OwbTensor *in[3] = { tensor (OWB_TYPE_BOOL, 2, (int64_t[]){ 2, 1 }, (double[]){ 1, 0 }),
                       make_strings (1, (int64_t[]){ 3 }, (const char *[]){ "a", "b", "c" }),
                       make_strings (0, NULL, (const char *[]){ "z" }) };
  g_autoptr (OwbTensor) y = run_ok (16, "Where", 3, in, NULL);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_STRING);
  g_assert_cmpint (y->nelems, ==, 6);
  const char *want[] = { "a", "b", "c", "z", "z", "z" };
  for (int i = 0; i < 6; i++)
    g_assert_cmpstr (((char **) y->data)[i], ==, want[i]);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (in[i]);
  /* float16 values are selected natively. */
  OwbTensor *h[3] = { tensor (OWB_TYPE_BOOL, 1, (int64_t[]){ 2 }, (double[]){ 0, 1 }),
                      tensor (OWB_TYPE_FLOAT16, 1, (int64_t[]){ 2 }, (double[]){ 1.5, 2.5 }),
                      tensor (OWB_TYPE_FLOAT16, 1, (int64_t[]){ 1 }, (double[]){ -1 }) };
  g_autoptr (OwbTensor) yh = run_ok (16, "Where", 3, h, NULL);
  assert_values (yh, OWB_TYPE_FLOAT16, 1, (int64_t[]){ 2 }, (double[]){ -1, 2.5 }, 0);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (h[i]);
}

static void
test_pow (void)
{
  OwbTensor *x = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 1.5, -2, 4 });
  OwbTensor *e = tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 3 }, (double[]){ 2, 3, -1 });
  OwbTensor *in[2] = { x, e };
  g_autoptr (OwbTensor) y = run_ok (15, "Pow", 2, in, NULL);
  assert_values (y, OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 2.25, -8, 0.25 }, 1e-6);
  /* Integer base, float exponent: the result is truncated to the base type. */
  OwbTensor *xi = tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ 10, 3 });
  OwbTensor *ef = tensor (OWB_TYPE_FLOAT, 0, NULL, (double[]){ 0.5 });
  OwbTensor *in2[2] = { xi, ef };
  g_autoptr (OwbTensor) y2 = run_ok (15, "Pow", 2, in2, NULL);
  assert_values (y2, OWB_TYPE_INT32, 1, (int64_t[]){ 2 }, (double[]){ 3, 1 }, 0);
  /* The x^2 and x^0.5 shortcuts. */
  OwbTensor *two = tensor (OWB_TYPE_FLOAT, 0, NULL, (double[]){ 2 });
  OwbTensor *half = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 1 }, (double[]){ 0.5 });
  OwbTensor *in3[2] = { x, two };
  g_autoptr (OwbTensor) sq = run_ok (15, "Pow", 2, in3, NULL);
  assert_values (sq, OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 2.25, 4, 16 }, 1e-6);
  in3[1] = half;
  g_autoptr (OwbTensor) rt = run_ok (15, "Pow", 2, in3, NULL);
  assert_values (rt, OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 1.224744871391589, NAN, 2 }, 1e-6);
  owb_tensor_unref (x);
  owb_tensor_unref (e);
  /* Results an integer cannot hold (0^-1 is infinity, (-2)^0.5 NaN) are stored as Cast stores
   * them: through int64, saturated, NaN 0, then the low bits (converting them directly is
   * undefined in C: x86 gave INT32_MIN). */
  OwbTensor *xe = tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 4 }, (double[]){ 0, 2, -2, 3 });
  OwbTensor *ee = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ -1, 100, 0.5, 2 });
  OwbTensor *in4[2] = { xe, ee };
  g_autoptr (OwbTensor) y4 = run_ok (15, "Pow", 2, in4, NULL);
  assert_values (y4, OWB_TYPE_INT32, 1, (int64_t[]){ 4 }, (double[]){ -1, -1, 0, 9 }, 0);
  owb_tensor_unref (xe);
  owb_tensor_unref (ee);
  owb_tensor_unref (xi);
  owb_tensor_unref (ef);
  owb_tensor_unref (two);
  owb_tensor_unref (half);
}

static void
test_variadic (void)
{
  OwbTensor *in[3] = { tensor (OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 1 }, (double[]){ 1, 2 }),
                       tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 10, 20, 30 }),
                       tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 1 }, (double[]){ 100 }) };
  g_autoptr (OwbTensor) s = run_ok (13, "Sum", 3, in, NULL);
  assert_values (s, OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, (double[]){ 111, 121, 131, 112, 122, 132 }, 0);
  g_autoptr (OwbTensor) mean = run_ok (13, "Mean", 3, in, NULL);
  assert_values (mean, OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, (double[]){ 37, 121.0 / 3, 131.0 / 3, 112.0 / 3, 122.0 / 3, 44 },
                 1e-6);
  /* Max propagates NaN. */
  owb_tensor_set_double (in[1], 1, NAN);
  g_autoptr (OwbTensor) mx = run_ok (13, "Max", 3, in, NULL);
  assert_values (mx, OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, (double[]){ 100, NAN, 100, 100, NAN, 100 }, 0);
  g_autoptr (OwbTensor) one = run_ok (13, "Min", 1, &in[1], NULL);
  assert_values (one, OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, (double[]){ 10, NAN, 30 }, 0);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (in[i]);
}

/* ---- activations and unary ops ---- */

static void setup_tanh (OwbNode *n) { tu_set_string (n, "approximate", "tanh"); }
static void setup_detect_pos_only (OwbNode *n) { tu_set_int (n, "detect_negative", 0); }

static void
test_unary_values (void)
{
  OwbTensor *x = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 6 }, (double[]){ -1000, -2.5, -0.5, 0.5, 1.5, 1000 });
  const int64_t d6[] = { 6 };
  g_autoptr (OwbTensor) round = run_ok (22, "Round", 1, &x, NULL);
  assert_values (round, OWB_TYPE_FLOAT, 1, d6, (double[]){ -1000, -2, -0.0, 0, 2, 1000 }, 0);
  /* Softplus and Mish stay finite for large inputs. */
  g_autoptr (OwbTensor) sp = run_ok (22, "Softplus", 1, &x, NULL);
  assert_values (sp, OWB_TYPE_FLOAT, 1, d6,
                 (double[]){ 0, 0.07888973429254963, 0.4740769841801067, 0.9740769841801067, 1.7014132779827524, 1000 },
                 1e-6);
  g_autoptr (OwbTensor) mish = run_ok (22, "Mish", 1, &x, NULL);
  g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (mish, 5), 1000, 1e-3);
  g_autoptr (OwbTensor) gelu = run_ok (20, "Gelu", 1, &x, NULL);
  g_autoptr (OwbTensor) gelu_tanh = run_ok (20, "Gelu", 1, &x, setup_tanh);
  /* References from Python's math.erf / math.tanh (tests do not link libm). */
  assert_values (gelu, OWB_TYPE_FLOAT, 1, d6,
                 (double[]){ 0, -0.015524163314440398, -0.15426876936299344, 0.34573123063700656, 1.399789198096713, 1000 },
                 1e-5);
  assert_values (gelu_tanh, OWB_TYPE_FLOAT, 1, d6,
                 (double[]){ 0, -0.015084266089998577, -0.15428599017485606, 0.34571400982514394, 1.3995715769802328, 1000 },
                 1e-5);
  g_autoptr (OwbTensor) hs = run_ok (14, "HardSwish", 1, &x, NULL);
  assert_values (hs, OWB_TYPE_FLOAT, 1, d6, (double[]){ 0, -2.5 * (0.5 - 2.5 / 6), -0.5 * (0.5 - 0.5 / 6),
                                                        0.5 * (0.5 + 0.5 / 6), 1.5 * (0.5 + 1.5 / 6), 1000 }, 1e-6);
  g_autoptr (OwbTensor) selu = run_ok (6, "Selu", 1, &x, NULL);
  g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (selu, 0), -1.0507009873554805 * 1.6732632423543772, 1e-5);
  g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (selu, 4), 1.0507009873554805 * 1.5, 1e-5);
  owb_tensor_unref (x);

  OwbTensor *inf = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ -INFINITY, INFINITY, NAN, 1 });
  g_autoptr (OwbTensor) ii = run_ok (20, "IsInf", 1, &inf, setup_detect_pos_only);
  assert_values (ii, OWB_TYPE_BOOL, 1, (int64_t[]){ 4 }, (double[]){ 0, 1, 0, 0 }, 0);
  g_autoptr (OwbTensor) in = run_ok (20, "IsNaN", 1, &inf, NULL);
  assert_values (in, OWB_TYPE_BOOL, 1, (int64_t[]){ 4 }, (double[]){ 0, 0, 1, 0 }, 0);
  g_autoptr (OwbTensor) relu = run_ok (14, "Relu", 1, &inf, NULL);
  assert_values (relu, OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ 0, INFINITY, NAN, 1 }, 0);
  owb_tensor_unref (inf);

  /* float16 runs through the float32 kernels. */
  OwbTensor *h = tensor (OWB_TYPE_FLOAT16, 1, (int64_t[]){ 3 }, (double[]){ -1, 0, 2 });
  g_autoptr (OwbTensor) hexp = run_ok (13, "Exp", 1, &h, NULL);
  assert_values (hexp, OWB_TYPE_FLOAT16, 1, (int64_t[]){ 3 }, (double[]){ 0.36787944117144233, 1, 7.38905609893065 }, 1e-3);
  owb_tensor_unref (h);
}

/* ---- Cast ---- */

static OwbDataType cast_to;
static void setup_cast (OwbNode *n) { tu_set_int (n, "to", cast_to); }
static void setup_cast_nosat (OwbNode *n) { tu_set_int (n, "to", cast_to); tu_set_int (n, "saturate", 0); }

static OwbTensor *
cast (int opset, OwbTensor *x, OwbDataType to, gboolean saturate)
{
  cast_to = to;
  return run_ok (opset, "Cast", 1, &x, saturate ? setup_cast : setup_cast_nosat);
}

static void
test_cast (void)
{
  OwbTensor *f = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 5 }, (double[]){ 3.7, -3.7, 0.1, 65504, -0.0 });
  g_autoptr (OwbTensor) h = cast (19, f, OWB_TYPE_FLOAT16, TRUE);
  g_assert_cmpint (h->dtype, ==, OWB_TYPE_FLOAT16);
  g_assert_cmphex (((uint16_t *) h->data)[3], ==, 0x7BFF);
  g_assert_cmphex (((uint16_t *) h->data)[4], ==, 0x8000);
  g_autoptr (OwbTensor) back = cast (19, h, OWB_TYPE_FLOAT, TRUE);
  assert_values (back, OWB_TYPE_FLOAT, 1, (int64_t[]){ 5 }, (double[]){ 3.69921875, -3.69921875, 0.0999755859375, 65504, 0 }, 0);
  g_autoptr (OwbTensor) bf = cast (19, f, OWB_TYPE_BFLOAT16, TRUE);
  g_assert_cmphex (((uint16_t *) bf->data)[0], ==, 0x406D);
  g_autoptr (OwbTensor) i = cast (13, f, OWB_TYPE_INT32, TRUE);
  assert_values (i, OWB_TYPE_INT32, 1, (int64_t[]){ 5 }, (double[]){ 3, -3, 0, 65504, 0 }, 0);
  g_autoptr (OwbTensor) b = cast (13, f, OWB_TYPE_BOOL, TRUE);
  assert_values (b, OWB_TYPE_BOOL, 1, (int64_t[]){ 5 }, (double[]){ 1, 1, 1, 1, 0 }, 0);
  owb_tensor_unref (f);

  /* Integers wrap; 64-bit values keep every bit. */
  OwbTensor *big = tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 3 }, (double[]){ 300, -1, 0 });
  ((int64_t *) big->data)[2] = G_MAXINT64;
  g_autoptr (OwbTensor) u8 = cast (13, big, OWB_TYPE_UINT8, TRUE);
  assert_values (u8, OWB_TYPE_UINT8, 1, (int64_t[]){ 3 }, (double[]){ 44, 255, 255 }, 0);
  g_autoptr (OwbTensor) u64 = cast (13, big, OWB_TYPE_UINT64, TRUE);
  g_assert_cmpuint (((uint64_t *) u64->data)[1], ==, G_MAXUINT64);
  g_assert_cmpuint (((uint64_t *) u64->data)[2], ==, (guint64) G_MAXINT64);
  owb_tensor_unref (big);

  /* Strings both ways. */
  OwbTensor *s = make_strings (1, (int64_t[]){ 5 }, (const char *[]){ "1e-5", "INF", "-inf", "NaN", "12345678901234567" });
  g_autoptr (OwbTensor) sf = cast (13, s, OWB_TYPE_DOUBLE, TRUE);
  assert_values (sf, OWB_TYPE_DOUBLE, 1, (int64_t[]){ 5 }, (double[]){ 1e-5, INFINITY, -INFINITY, NAN, 12345678901234567.0 }, 1e-12);
  owb_tensor_unref (s);
  s = make_strings (1, (int64_t[]){ 2 }, (const char *[]){ "12345678901234567", "-42" });
  g_autoptr (OwbTensor) si = cast (13, s, OWB_TYPE_INT64, TRUE);
  g_assert_cmpint (((int64_t *) si->data)[0], ==, G_GINT64_CONSTANT (12345678901234567));
  g_assert_cmpint (((int64_t *) si->data)[1], ==, -42);
  owb_tensor_unref (s);
  OwbTensor *d = tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]){ 3 }, (double[]){ 0.5, -INFINITY, 0.1 });
  g_autoptr (OwbTensor) ds = cast (13, d, OWB_TYPE_STRING, TRUE);
  g_assert_cmpstr (((char **) ds->data)[0], ==, "0.5");
  g_assert_cmpstr (((char **) ds->data)[1], ==, "-INF");
  g_assert_cmpfloat (g_ascii_strtod (((char **) ds->data)[2], NULL), ==, 0.1);
  owb_tensor_unref (d);

  /* float 8: round to nearest even, saturate or not. */
  OwbTensor *e = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 6 }, (double[]){ 448, 500, -1000, 0.0107421875, 1.0625, NAN });
  g_autoptr (OwbTensor) f8 = cast (19, e, OWB_TYPE_FLOAT8E4M3FN, TRUE);
  const uint8_t want_sat[] = { 0x7E, 0x7E, 0xFE, 0x06, 0x38, 0x7F };
  for (int k = 0; k < 6; k++)
    g_assert_cmphex (((uint8_t *) f8->data)[k], ==, want_sat[k]);
  g_autoptr (OwbTensor) f8n = cast (19, e, OWB_TYPE_FLOAT8E4M3FN, FALSE);
  g_assert_cmphex (((uint8_t *) f8n->data)[1], ==, 0x7F);
  g_assert_cmphex (((uint8_t *) f8n->data)[2], ==, 0xFF);
  g_autoptr (OwbTensor) f8back = cast (19, f8, OWB_TYPE_FLOAT, TRUE);
  assert_values (f8back, OWB_TYPE_FLOAT, 1, (int64_t[]){ 6 }, (double[]){ 448, 448, -448, 0.01171875, 1, NAN }, 0);
  g_autoptr (OwbTensor) e5 = cast (19, e, OWB_TYPE_FLOAT8E5M2, FALSE);
  g_autoptr (OwbTensor) e5back = cast (19, e5, OWB_TYPE_FLOAT, TRUE);
  assert_values (e5back, OWB_TYPE_FLOAT, 1, (int64_t[]){ 6 }, (double[]){ 448, 512, -1024, 0.01171875, 1, NAN }, 1e-6);
  owb_tensor_unref (e);
  /* Infinity saturates, except into the FNUZ types before opset 24, which made it NaN. */
  OwbTensor *inf = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 1 }, (double[]){ -INFINITY });
  g_autoptr (OwbTensor) fn19 = cast (19, inf, OWB_TYPE_FLOAT8E4M3FN, TRUE);
  g_assert_cmphex (((uint8_t *) fn19->data)[0], ==, 0xFE);
  g_autoptr (OwbTensor) uz19 = cast (19, inf, OWB_TYPE_FLOAT8E4M3FNUZ, TRUE);
  g_assert_cmphex (((uint8_t *) uz19->data)[0], ==, 0x80);
  g_autoptr (OwbTensor) uz24 = cast (24, inf, OWB_TYPE_FLOAT8E4M3FNUZ, TRUE);
  g_assert_cmphex (((uint8_t *) uz24->data)[0], ==, 0xFF);
  owb_tensor_unref (inf);
}

/* ---- Cast to and from int2/uint2, float8e8m0 and float6 ---- */

/* A tensor of a one-byte element type (sub-byte types are held one element per byte). */
static OwbTensor *
make_bytes (OwbDataType dtype, int64_t n, const int8_t *bytes)
{
  OwbTensor *t = owb_tensor_new (dtype, 1, &n, NULL);
  g_assert_nonnull (t);
  memcpy (t->data, bytes, n);
  return t;
}

static void
assert_bytes (const OwbTensor *got, OwbDataType dtype, int64_t n, const uint8_t *want)
{
  g_assert_nonnull (got);
  g_assert_cmpint (got->dtype, ==, dtype);
  g_assert_cmpint (got->nelems, ==, n);
  for (int64_t i = 0; i < n; i++)
    if (((const uint8_t *) got->data)[i] != want[i])
      g_error ("%s element %" G_GINT64_FORMAT ": got 0x%02x, want 0x%02x", owb_data_type_name (dtype), i,
               ((const uint8_t *) got->data)[i], want[i]);
}

static const char *cast_round;
static void
setup_cast_round (OwbNode *n)
{
  tu_set_int (n, "to", cast_to);
  tu_set_string (n, "round_mode", cast_round);
}
static void
setup_cast_round_nosat (OwbNode *n)
{
  setup_cast_round (n);
  tu_set_int (n, "saturate", 0);
}

static OwbTensor *
cast_e8m0 (OwbTensor *x, const char *round, gboolean saturate)
{
  cast_to = OWB_TYPE_FLOAT8E8M0;
  cast_round = round;
  return run_ok (25, "Cast", 1, &x, saturate ? setup_cast_round : setup_cast_round_nosat);
}

static void setup_round_bogus (OwbNode *n) { tu_set_int (n, "to", OWB_TYPE_FLOAT8E8M0); tu_set_string (n, "round_mode", "even"); }
static void setup_castlike_round_bogus (OwbNode *n) { tu_set_string (n, "round_mode", "UP"); }
static void setup_to_int2 (OwbNode *n) { tu_set_int (n, "to", OWB_TYPE_INT2); }

static void
test_cast_int2 (void)
{
  /* Floats round to nearest even, then keep the low 2 bits (as the conformance data wraps -3 to 1). */
  OwbTensor *f = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 10 }, (double[]){ -3, -2, -1, 0, 1, 2, 3, 2.5, 1.5, -2.5 });
  g_autoptr (OwbTensor) i2 = cast (25, f, OWB_TYPE_INT2, TRUE);
  assert_bytes (i2, OWB_TYPE_INT2, 10, (const uint8_t[]){ 1, 0xFE, 0xFF, 0, 1, 0xFE, 0xFF, 0xFE, 0xFE, 0xFE });
  g_autoptr (OwbTensor) u2 = cast (25, f, OWB_TYPE_UINT2, TRUE);
  assert_bytes (u2, OWB_TYPE_UINT2, 10, (const uint8_t[]){ 1, 2, 3, 0, 1, 2, 3, 2, 2, 2 });
  owb_tensor_unref (f);

  /* Integers wrap through the integer path, 64-bit values included. */
  OwbTensor *big = tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, (double[]){ 5, -5, 6, 0 });
  ((int64_t *) big->data)[3] = G_MININT64 + 3;
  g_autoptr (OwbTensor) bi2 = cast (25, big, OWB_TYPE_INT2, TRUE);
  assert_bytes (bi2, OWB_TYPE_INT2, 4, (const uint8_t[]){ 1, 0xFF, 0xFE, 0xFF });
  g_autoptr (OwbTensor) bu2 = cast (25, big, OWB_TYPE_UINT2, TRUE);
  assert_bytes (bu2, OWB_TYPE_UINT2, 4, (const uint8_t[]){ 1, 3, 2, 3 });
  owb_tensor_unref (big);

  /* From int2/uint2: exact, sign-extended for int2; to string as integers. */
  OwbTensor *s2 = make_bytes (OWB_TYPE_INT2, 4, (const int8_t[]){ -2, -1, 0, 1 });
  g_autoptr (OwbTensor) s2f = cast (25, s2, OWB_TYPE_FLOAT, TRUE);
  assert_values (s2f, OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ -2, -1, 0, 1 }, 0);
  g_autoptr (OwbTensor) s2u64 = cast (25, s2, OWB_TYPE_UINT64, TRUE);
  g_assert_cmpuint (((uint64_t *) s2u64->data)[0], ==, G_MAXUINT64 - 1);
  g_autoptr (OwbTensor) s2u2 = cast (25, s2, OWB_TYPE_UINT2, TRUE);
  assert_bytes (s2u2, OWB_TYPE_UINT2, 4, (const uint8_t[]){ 2, 3, 0, 1 });
  g_autoptr (OwbTensor) s2s = cast (25, s2, OWB_TYPE_STRING, TRUE);
  g_assert_cmpstr (((char **) s2s->data)[0], ==, "-2");
  g_autoptr (OwbTensor) s2b = cast (25, s2, OWB_TYPE_BOOL, TRUE);
  assert_values (s2b, OWB_TYPE_BOOL, 1, (int64_t[]){ 4 }, (double[]){ 1, 1, 0, 1 }, 0);
  owb_tensor_unref (s2);
  OwbTensor *us2 = make_bytes (OWB_TYPE_UINT2, 4, (const int8_t[]){ 0, 1, 2, 3 });
  g_autoptr (OwbTensor) us2h = cast (25, us2, OWB_TYPE_FLOAT16, TRUE);
  assert_values (us2h, OWB_TYPE_FLOAT16, 1, (int64_t[]){ 4 }, (double[]){ 0, 1, 2, 3 }, 0);
  g_autoptr (OwbTensor) us2i = cast (25, us2, OWB_TYPE_INT2, TRUE);
  assert_bytes (us2i, OWB_TYPE_INT2, 4, (const uint8_t[]){ 0, 1, 0xFE, 0xFF });
  /* CastLike takes the int2 target from its second input. */
  OwbTensor *like[] = { tensor (OWB_TYPE_INT32, 1, (int64_t[]){ 3 }, (double[]){ 7, -7, 2 }),
                        make_bytes (OWB_TYPE_INT2, 1, (const int8_t[]){ 0 }) };
  g_autoptr (OwbTensor) cl = run_ok (25, "CastLike", 2, like, NULL);
  assert_bytes (cl, OWB_TYPE_INT2, 3, (const uint8_t[]){ 0xFF, 1, 0xFE });
  owb_tensor_unref (like[0]);
  owb_tensor_unref (like[1]);
  owb_tensor_unref (us2);

  const In unary[] = { { OWB_TYPE_FLOAT, 2, { -2, 3 } } };
  expect_type (25, "Cast", 1, unary, setup_to_int2, "int2[batch,3]");
  const In castlike[] = { { OWB_TYPE_FLOAT, 1, { -2 } }, { OWB_TYPE_UINT2, 0, { 0 } } };
  expect_type (25, "CastLike", 2, castlike, NULL, "uint2[batch]");
}

static void
test_cast_e8m0 (void)
{
  /* 0.124 -> 0.125, 1.1 -> 2 (up) or 1 (down, nearest); 1.5 is the tie that "nearest" rounds up;
   * 1.5 * 2^127 is past the largest power of two in "up" and "nearest"; 2^-130 is below the
   * smallest. The sign is ignored. */
  const double x[] = { 0.124, 1.1, 1.5, 1.49, -4, 1, 0x1.8p127, 0x1p-130, 0x1p-127 };
  OwbTensor *f = tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]){ 9 }, x);
  g_autoptr (OwbTensor) up = cast_e8m0 (f, "up", TRUE);
  assert_bytes (up, OWB_TYPE_FLOAT8E8M0, 9, (const uint8_t[]){ 0x7C, 0x80, 0x80, 0x80, 0x81, 0x7F, 0xFE, 0x00, 0x00 });
  g_autoptr (OwbTensor) up_nosat = cast_e8m0 (f, "up", FALSE);
  assert_bytes (up_nosat, OWB_TYPE_FLOAT8E8M0, 9, (const uint8_t[]){ 0x7C, 0x80, 0x80, 0x80, 0x81, 0x7F, 0xFF, 0xFF, 0x00 });
  g_autoptr (OwbTensor) down = cast_e8m0 (f, "down", FALSE);
  assert_bytes (down, OWB_TYPE_FLOAT8E8M0, 9, (const uint8_t[]){ 0x7B, 0x7F, 0x7F, 0x7F, 0x81, 0x7F, 0xFE, 0xFF, 0x00 });
  g_autoptr (OwbTensor) nearest = cast_e8m0 (f, "nearest", FALSE);
  assert_bytes (nearest, OWB_TYPE_FLOAT8E8M0, 9, (const uint8_t[]){ 0x7C, 0x7F, 0x80, 0x7F, 0x81, 0x7F, 0xFF, 0xFF, 0x00 });
  owb_tensor_unref (f);

  /* Special values: zero and infinity saturate to the ends, or are NaN with saturate off. */
  OwbTensor *sp = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, (double[]){ 0, INFINITY, NAN, -0.0 });
  g_autoptr (OwbTensor) sp_sat = cast_e8m0 (sp, "up", TRUE);
  assert_bytes (sp_sat, OWB_TYPE_FLOAT8E8M0, 4, (const uint8_t[]){ 0x00, 0xFE, 0xFF, 0x00 });
  g_autoptr (OwbTensor) sp_nosat = cast_e8m0 (sp, "nearest", FALSE);
  assert_bytes (sp_nosat, OWB_TYPE_FLOAT8E8M0, 4, (const uint8_t[]){ 0xFF, 0xFF, 0xFF, 0xFF });
  owb_tensor_unref (sp);

  /* float16 and strings reach it too; round_mode defaults to "up". */
  OwbTensor *h = tensor (OWB_TYPE_FLOAT16, 1, (int64_t[]){ 2 }, (double[]){ 3, 0.25 });
  g_autoptr (OwbTensor) he = cast (25, h, OWB_TYPE_FLOAT8E8M0, TRUE);
  assert_bytes (he, OWB_TYPE_FLOAT8E8M0, 2, (const uint8_t[]){ 0x81, 0x7D });
  owb_tensor_unref (h);
  OwbTensor *str = make_strings (1, (int64_t[]){ 2 }, (const char *[]){ "3", "0.5" });
  g_autoptr (OwbTensor) se = cast (25, str, OWB_TYPE_FLOAT8E8M0, TRUE);
  assert_bytes (se, OWB_TYPE_FLOAT8E8M0, 2, (const uint8_t[]){ 0x81, 0x7E });
  owb_tensor_unref (str);

  /* Back: 2^(code - 127), 0xFF is NaN; 2^-127 is a float32 subnormal and 0 in float16. */
  OwbTensor *e = make_bytes (OWB_TYPE_FLOAT8E8M0, 5, (const int8_t[]){ 0x7F, (int8_t) 0x80, 0x00, (int8_t) 0xFE, (int8_t) 0xFF });
  g_autoptr (OwbTensor) ef = cast (25, e, OWB_TYPE_FLOAT, TRUE);
  assert_values (ef, OWB_TYPE_FLOAT, 1, (int64_t[]){ 5 }, (double[]){ 1, 2, 0x1p-127, 0x1p127, NAN }, 0);
  g_assert_cmpfloat (((float *) ef->data)[2], >, 0);
  g_autoptr (OwbTensor) eh = cast (25, e, OWB_TYPE_FLOAT16, TRUE);
  assert_values (eh, OWB_TYPE_FLOAT16, 1, (int64_t[]){ 5 }, (double[]){ 1, 2, 0, INFINITY, NAN }, 0);
  g_autoptr (OwbTensor) ei = cast (25, e, OWB_TYPE_INT32, TRUE);
  g_assert_cmpint (((int32_t *) ei->data)[1], ==, 2);
  g_autoptr (OwbTensor) e8 = cast (25, e, OWB_TYPE_FLOAT8E4M3FN, TRUE);
  assert_bytes (e8, OWB_TYPE_FLOAT8E4M3FN, 5, (const uint8_t[]){ 0x38, 0x40, 0x00, 0x7E, 0x7F });
  owb_tensor_unref (e);

  const In f1[] = { { OWB_TYPE_FLOAT, 2, { 2, 3 } } };
  expect_error (25, "Cast", 1, f1, setup_round_bogus, OWB_ERROR_INVALID_MODEL, "round_mode");
  const In like[] = { { OWB_TYPE_FLOAT, 1, { 3 } }, { OWB_TYPE_FLOAT8E8M0, 0, { 0 } } };
  expect_error (25, "CastLike", 2, like, setup_castlike_round_bogus, OWB_ERROR_INVALID_MODEL, "round_mode");
}

static void
test_cast_float6 (void)
{
  /* Round to nearest even and always saturate (no infinity, no NaN); NaN becomes the largest
   * positive value and -0 is 0, as ONNX's float6 notes say. */
  const double x[] = { 25, -0.0, INFINITY, -INFINITY, NAN, 0.1875, 1.0625, -7.3, 0.03, 0.0625 };
  OwbTensor *f = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 10 }, x);
  g_autoptr (OwbTensor) a = cast (25, f, OWB_TYPE_FLOAT6E2M3, FALSE);
  assert_bytes (a, OWB_TYPE_FLOAT6E2M3, 10, (const uint8_t[]){ 0x1F, 0x00, 0x1F, 0x3F, 0x1F, 0x02, 0x08, 0x3F, 0x00, 0x00 });
  g_autoptr (OwbTensor) b = cast (25, f, OWB_TYPE_FLOAT6E3M2, TRUE);
  assert_bytes (b, OWB_TYPE_FLOAT6E3M2, 10, (const uint8_t[]){ 0x1E, 0x00, 0x1F, 0x3F, 0x1F, 0x03, 0x0C, 0x37, 0x00, 0x01 });
  owb_tensor_unref (f);
  g_autoptr (OwbTensor) aback = cast (25, a, OWB_TYPE_FLOAT, TRUE);
  assert_values (aback, OWB_TYPE_FLOAT, 1, (int64_t[]){ 10 }, (double[]){ 7.5, 0, 7.5, -7.5, 7.5, 0.25, 1, -7.5, 0, 0 }, 0);
  g_autoptr (OwbTensor) bback = cast (25, b, OWB_TYPE_DOUBLE, TRUE);
  assert_values (bback, OWB_TYPE_DOUBLE, 1, (int64_t[]){ 10 }, (double[]){ 24, 0, 28, -28, 28, 0.1875, 1, -7, 0, 0.0625 }, 0);
  /* Every code decodes exactly and encodes back to itself (-0 aside). */
  int8_t all[64];
  for (int k = 0; k < 64; k++)
    all[k] = (int8_t) k;
  for (int t = 0; t < 2; t++)
    {
      OwbDataType type = t ? OWB_TYPE_FLOAT6E3M2 : OWB_TYPE_FLOAT6E2M3;
      OwbTensor *codes = make_bytes (type, 64, all);
      g_autoptr (OwbTensor) d = cast (25, codes, OWB_TYPE_FLOAT, TRUE);
      g_autoptr (OwbTensor) again = cast (25, d, type, TRUE);
      for (int k = 0; k < 64; k++)
        g_assert_cmphex (((uint8_t *) again->data)[k], ==, k == 0x20 ? 0 : k);
      owb_tensor_unref (codes);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/elementwise/broadcast", test_broadcast);
  g_test_add_func ("/elementwise/legacy-broadcast", test_legacy_broadcast);
  g_test_add_func ("/elementwise/prelu-legacy", test_prelu_legacy);
  g_test_add_func ("/elementwise/integer-edges", test_integer_edges);
  g_test_add_func ("/elementwise/errors", test_errors);
  g_test_add_func ("/elementwise/symbolic-inference", test_symbolic_inference);
  g_test_add_func ("/elementwise/clip", test_clip);
  g_test_add_func ("/elementwise/where", test_where);
  g_test_add_func ("/elementwise/pow", test_pow);
  g_test_add_func ("/elementwise/variadic", test_variadic);
  g_test_add_func ("/elementwise/unary-values", test_unary_values);
  g_test_add_func ("/elementwise/cast", test_cast);
  g_test_add_func ("/elementwise/cast-int2", test_cast_int2);
  g_test_add_func ("/elementwise/cast-e8m0", test_cast_e8m0);
  g_test_add_func ("/elementwise/cast-float6", test_cast_float6);
  return g_test_run ();
}
