/* test-tensor-compare.c: owb_tensor_compare's largest absolute and relative errors, beside the
 * pass/fail rules that tests/app/test-owb-check.c covers through `owb check`. */
#include <owb/owb.h>
#include "test-util.h"

#include <math.h>
#include <string.h>

static void
test_errors (void)
{
  const float e[] = { 1.0f, -4.0f, 0.5f, NAN };
  const float g[] = { 1.5f, -4.2f, 0.5f, NAN };
  g_autoptr (OwbTensor) a = tu_vector (OWB_TYPE_FLOAT, 4, e), b = tu_vector (OWB_TYPE_FLOAT, 4, g);
  OwbTensorComparison result;
  g_autofree char *why = NULL;

  /* Fails at rtol 1e-3: index 0 and 1 are outside; the largest errors are still reported. */
  g_assert_false (owb_tensor_compare (a, b, 1e-3, 1e-5, &result, &why));
  g_assert_cmpint (result.n_elements, ==, 4);
  g_assert_cmpfloat_with_epsilon (result.max_abs_error, 0.5, 1e-6);
  g_assert_cmpfloat_with_epsilon (result.max_rel_error, 0.5, 1e-6);
  g_assert_nonnull (strstr (why, "at index 0: expected 1, got 1.5 (2 of 4 elements differ"));

  /* Passes at a tolerance that covers both. */
  g_assert_true (owb_tensor_compare (a, b, 0.6, 0, &result, NULL));
  g_assert_cmpfloat_with_epsilon (result.max_abs_error, 0.5, 1e-6);

  /* Identical: zero errors. */
  g_assert_true (owb_tensor_compare (a, a, 0, 0, &result, NULL));
  g_assert_cmpfloat (result.max_abs_error, ==, 0);
  g_assert_cmpfloat (result.max_rel_error, ==, 0);
}

static void
test_zero_expected (void)
{
  const float e[] = { 0.0f, 2.0f };
  const float g[] = { 1e-6f, 2.0f };
  g_autoptr (OwbTensor) a = tu_vector (OWB_TYPE_FLOAT, 2, e), b = tu_vector (OWB_TYPE_FLOAT, 2, g);
  OwbTensorComparison result;
  /* Within atol, but relative to 0 the error is infinite, as numpy says it. */
  g_assert_true (owb_tensor_compare (a, b, 0, 1e-5, &result, NULL));
  g_assert_true (isinf (result.max_rel_error));
  g_assert_cmpfloat_with_epsilon (result.max_abs_error, 1e-6, 1e-9);
}

static void
test_integers_and_mismatch (void)
{
  int64_t dims[1] = { 3 };
  g_autoptr (OwbTensor) a = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  g_autoptr (OwbTensor) b = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  ((int64_t *) a->data)[1] = 10;
  ((int64_t *) b->data)[1] = 7;
  OwbTensorComparison result;
  g_assert_false (owb_tensor_compare (a, b, 1, 100, &result, NULL)); /* integers: exactly */
  g_assert_cmpfloat (result.max_abs_error, ==, 3);
  g_assert_cmpfloat_with_epsilon (result.max_rel_error, 0.3, 1e-12);

  /* Another shape: no pairs, no errors, and the message says the shapes. */
  int64_t four[1] = { 4 };
  g_autoptr (OwbTensor) c = owb_tensor_new (OWB_TYPE_INT64, 1, four, NULL);
  g_autofree char *why = NULL;
  g_assert_false (owb_tensor_compare (a, c, 0, 0, &result, &why));
  g_assert_cmpint (result.n_elements, ==, 0);
  g_assert_cmpstr (why, ==, "expected shape [3], got [4]");
  g_clear_pointer (&why, g_free);
  g_assert_false (owb_tensor_compare (a, NULL, 0, 0, &result, &why));
  g_assert_cmpstr (why, ==, "no value was produced");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor-compare/errors", test_errors);
  g_test_add_func ("/tensor-compare/zero-expected", test_zero_expected);
  g_test_add_func ("/tensor-compare/integers-and-mismatch", test_integers_and_mismatch);
  return g_test_run ();
}
