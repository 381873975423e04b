/* test-owb-check.c: the comparison rules of `owb check` and the conformance test, and the
 * skip/tolerance list parser (app/owb-check.c). */
#include "owb-check.h"
#include "../engine/test-util.h"

#include <glib/gstdio.h>

#include <math.h>
#include <string.h>

static gboolean
same (const OwbTensor *e, const OwbTensor *g, double rtol, double atol, char **why)
{
  return owb_tensor_compare (e, g, rtol, atol, NULL, why);
}

static void
test_tolerance (void)
{
  const float e[] = { 1.0f, 100.0f, 0.0f };
  const float inside[] = { 1.0f + 1.05e-3f, 100.05f, 9e-6f };
  const float outside[] = { 1.0f, 100.2f, 0.0f };
  g_autoptr (OwbTensor) a = tu_vector (OWB_TYPE_FLOAT, 3, e), b = tu_vector (OWB_TYPE_FLOAT, 3, inside);
  g_autoptr (OwbTensor) c = tu_vector (OWB_TYPE_FLOAT, 3, outside);
  g_autofree char *why = NULL;

  /* |got - expected| <= atol + rtol * |expected| */
  g_assert_true (same (a, b, 1e-3, 1e-4, NULL));
  g_assert_false (same (a, b, 1e-4, 1e-6, NULL));
  g_assert_false (same (a, c, 1e-3, 1e-5, &why));
  /* The first mismatching index, expected and got, and how many differ. */
  g_assert_nonnull (strstr (why, "index 1"));
  g_assert_nonnull (strstr (why, "expected 100"));
  g_assert_nonnull (strstr (why, "got 100.19"));
  g_assert_nonnull (strstr (why, "1 of 3"));
}

static void
test_nan_and_inf (void)
{
  const float e[] = { NAN, INFINITY, -INFINITY };
  const float g_same[] = { NAN, INFINITY, -INFINITY };
  const float g_nan[] = { 0.0f, INFINITY, -INFINITY };
  const float g_inf[] = { NAN, -INFINITY, -INFINITY };
  const float g_big[] = { NAN, 3e38f, -INFINITY };
  g_autoptr (OwbTensor) a = tu_vector (OWB_TYPE_FLOAT, 3, e), b = tu_vector (OWB_TYPE_FLOAT, 3, g_same);
  g_autoptr (OwbTensor) c = tu_vector (OWB_TYPE_FLOAT, 3, g_nan), d = tu_vector (OWB_TYPE_FLOAT, 3, g_inf);
  g_autoptr (OwbTensor) big = tu_vector (OWB_TYPE_FLOAT, 3, g_big);

  g_assert_true (same (a, b, 1e-3, 1e-5, NULL));
  g_assert_false (same (a, c, 1e-3, 1e-5, NULL));
  g_assert_false (same (c, a, 1e-3, 1e-5, NULL));
  g_assert_false (same (a, d, 1e-3, 1e-5, NULL));
  /* An infinite expected value is no licence for any finite one. */
  g_assert_false (same (a, big, 1e-3, 1e-5, NULL));
  g_assert_false (same (big, a, 1e-3, 1e-5, NULL));
}

static void
test_integers_exact (void)
{
  int64_t dims[1] = { 3 };
  g_autoptr (OwbTensor) a = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  g_autoptr (OwbTensor) b = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  g_autoptr (OwbTensor) x = owb_tensor_new (OWB_TYPE_BOOL, 1, dims, NULL);
  g_autoptr (OwbTensor) y = owb_tensor_new (OWB_TYPE_BOOL, 1, dims, NULL);
  g_autofree char *why = NULL;

  ((int64_t *) a->data)[2] = G_GINT64_CONSTANT (9007199254740993); /* not a double */
  ((int64_t *) b->data)[2] = G_GINT64_CONSTANT (9007199254740992);
  /* A tolerance never applies to integers. */
  g_assert_false (same (a, b, 1.0, 1.0, &why));
  g_assert_nonnull (strstr (why, "9007199254740993"));
  ((int64_t *) b->data)[2] = G_GINT64_CONSTANT (9007199254740993);
  g_assert_true (same (a, b, 0, 0, NULL));

  ((guint8 *) x->data)[1] = 1;
  g_assert_false (same (x, y, 1, 1, NULL));
  ((guint8 *) y->data)[1] = 1;
  g_assert_true (same (x, y, 0, 0, NULL));
}

static void
test_types_and_shapes (void)
{
  int64_t d23[2] = { 2, 3 }, d32[2] = { 3, 2 }, d6[1] = { 6 };
  g_autoptr (OwbTensor) a = owb_tensor_new (OWB_TYPE_FLOAT, 2, d23, NULL);
  g_autoptr (OwbTensor) b = owb_tensor_new (OWB_TYPE_FLOAT, 2, d32, NULL);
  g_autoptr (OwbTensor) c = owb_tensor_new (OWB_TYPE_FLOAT, 1, d6, NULL);
  g_autoptr (OwbTensor) d = owb_tensor_new (OWB_TYPE_DOUBLE, 2, d23, NULL);
  g_autofree char *why_shape = NULL, *why_rank = NULL, *why_type = NULL, *why_none = NULL;

  g_assert_false (same (a, b, 1, 1, &why_shape));
  g_assert_nonnull (strstr (why_shape, "shape [2,3], got [3,2]"));
  g_assert_false (same (a, c, 1, 1, &why_rank));
  g_assert_false (same (a, d, 1, 1, &why_type));
  g_assert_nonnull (strstr (why_type, "float64"));
  g_assert_false (same (a, NULL, 1, 1, &why_none));
  g_assert_true (same (a, a, 0, 0, NULL));
}

static void
test_strings (void)
{
  int64_t dims[1] = { 2 };
  g_autoptr (OwbTensor) a = owb_tensor_new (OWB_TYPE_STRING, 1, dims, NULL);
  g_autoptr (OwbTensor) b = owb_tensor_new (OWB_TYPE_STRING, 1, dims, NULL);
  g_autofree char *why = NULL;

  ((char **) a->data)[0] = g_strdup ("cat");
  ((char **) b->data)[0] = g_strdup ("cat");
  ((char **) a->data)[1] = g_strdup ("dog");
  ((char **) b->data)[1] = g_strdup ("Dog");
  g_assert_false (same (a, b, 1, 1, &why));
  g_assert_nonnull (strstr (why, "\"dog\""));
  g_free (((char **) b->data)[1]);
  ((char **) b->data)[1] = g_strdup ("dog");
  g_assert_true (same (a, b, 0, 0, NULL));
}

static void
test_skip_list (void)
{
  const char *text = "# comment\n"
                     "\n"
                     "test_foo_*   Foo is missing\n"
                     "test_bar\trtol=1e-2 atol=0.5  bfloat16 rounds\n"
                     "test_foo_bar  never reached: the glob above wins\n"
                     "test_ba?     rtol=1   any other test_ba? case\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbCheckSkipList) list = owb_check_skip_list_parse (text, "skip.txt", &error);
  double rtol = 1e-3, atol = 1e-5;
  const char *reason = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (owb_check_skip_list_get_skip (list, "test_foo_bar"), ==, "Foo is missing");
  g_assert_cmpstr (owb_check_skip_list_get_skip (list, "test_foo_"), ==, "Foo is missing");
  g_assert_null (owb_check_skip_list_get_skip (list, "test_foo"));
  g_assert_null (owb_check_skip_list_get_skip (list, "test_bar"));
  g_assert_true (owb_check_skip_list_get_tolerance (list, "test_bar", &rtol, &atol, &reason));
  g_assert_cmpfloat (rtol, ==, 1e-2);
  g_assert_cmpfloat (atol, ==, 0.5);
  g_assert_cmpstr (reason, ==, "bfloat16 rounds");
  rtol = atol = 7;
  g_assert_true (owb_check_skip_list_get_tolerance (list, "test_baz", &rtol, &atol, NULL));
  g_assert_cmpfloat (rtol, ==, 1);
  g_assert_cmpfloat (atol, ==, 7); /* left as it was */
  g_assert_false (owb_check_skip_list_get_tolerance (list, "test_qux", &rtol, &atol, NULL));
  g_assert_null (owb_check_skip_list_get_skip (NULL, "test_foo_bar"));
}

static void
test_skip_list_errors (void)
{
  const char *bad[] = {
    "test_foo\n",                    /* no reason */
    "test_foo   \t \n",              /* no reason */
    "test_foo rtol=1e-2\n",          /* tolerance without a reason */
    "test_foo rtol=abc reason\n",    /* not a number */
    "test_foo atol=-1 reason\n",     /* negative */
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (OwbCheckSkipList) list = owb_check_skip_list_parse (bad[i], "skip.txt", &error);
      g_assert_null (list);
      g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "skip.txt:1"));
    }
}

static void
test_case_without_model (void)
{
  g_autofree char *dir = g_dir_make_tmp ("owb-check-XXXXXX", NULL);
  g_autofree char *model = g_build_filename (dir, "model.onnx", NULL);
  g_autofree char *why = NULL;
  g_autofree char *why_skip = NULL;
  g_autoptr (GPtrArray) cases = NULL;

  g_assert_cmpint (owb_check_case (dir, NULL, &why), ==, OWB_CHECK_FAILED);
  g_assert_nonnull (strstr (why, "model.onnx"));
  /* A case with a model but no data sets has nothing to compare: skipped. */
  g_assert_true (g_file_set_contents (model, "", 0, NULL));
  g_assert_cmpint (owb_check_case (dir, NULL, &why_skip), ==, OWB_CHECK_SKIPPED);
  cases = owb_check_find_cases (dir);
  g_assert_cmpuint (cases->len, ==, 1);
  g_assert_cmpstr (cases->pdata[0], ==, dir);
  g_remove (model);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/owb-check/tolerance", test_tolerance);
  g_test_add_func ("/owb-check/nan-and-inf", test_nan_and_inf);
  g_test_add_func ("/owb-check/integers-exact", test_integers_exact);
  g_test_add_func ("/owb-check/types-and-shapes", test_types_and_shapes);
  g_test_add_func ("/owb-check/strings", test_strings);
  g_test_add_func ("/owb-check/skip-list", test_skip_list);
  g_test_add_func ("/owb-check/skip-list-errors", test_skip_list_errors);
  g_test_add_func ("/owb-check/case-without-model", test_case_without_model);
  return g_test_run ();
}
