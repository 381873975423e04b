/* test-json.c: the JSON writer's member and item helpers (commas, keys escaped, null for missing
 * strings and non-finite numbers) and owb_error_is_cancelled, which every "was this cancelled" test
 * of the pages and the owb tool asks. */
#include <owb/owb.h>

#include <math.h>

static void
test_members (void)
{
  g_autoptr (GString) out = g_string_new (NULL);
  owb_json_begin_object (out, NULL);
  owb_json_append_member_string (out, "name", "a\"b");
  owb_json_append_member_int (out, "neg", -3);
  owb_json_append_member_uint (out, "big", G_MAXUINT64);
  owb_json_append_member_number (out, "x", 0.125, 6);
  owb_json_append_member_number (out, "nan", NAN, 6);
  owb_json_append_member_string_or_null (out, "none", NULL);
  owb_json_append_member_fixed (out, "ms", 2.0 / 3.0, 3);
  owb_json_append_member_fixed (out, "inf", INFINITY, 3);
  owb_json_begin_array (out, "list");
  for (int i = 0; i < 2; i++)
    {
      owb_json_begin_object (out, NULL);
      owb_json_append_member_int (out, "i", i);
      g_string_append_c (out, '}');
    }
  owb_json_append_separator (out);
  owb_json_append_string (out, "s");
  g_string_append_c (out, ']');
  owb_json_begin_array (out, "empty");
  g_string_append_c (out, ']');
  owb_json_append_key (out, "k\n");
  owb_json_begin_object (out, NULL); /* after a key: no comma */
  g_string_append (out, "}}");
  g_assert_cmpstr (out->str, ==,
                   "{\"name\":\"a\\\"b\",\"neg\":-3,\"big\":18446744073709551615,\"x\":0.125,\"nan\":null,"
                   "\"none\":null,\"ms\":0.667,\"inf\":null,\"list\":[{\"i\":0},{\"i\":1},\"s\"],\"empty\":[],\"k\\n\":{}}");
}

static void
test_error_is_cancelled (void)
{
  g_autoptr (GError) io = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "stop");
  g_autoptr (GError) owb = g_error_new_literal (OWB_ERROR, OWB_ERROR_CANCELLED, "stop");
  g_autoptr (GError) other_io = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "x");
  g_autoptr (GError) other_owb = g_error_new_literal (OWB_ERROR, OWB_ERROR_IO, "x");
  g_assert_true (owb_error_is_cancelled (io));
  g_assert_true (owb_error_is_cancelled (owb));
  g_assert_false (owb_error_is_cancelled (other_io));
  g_assert_false (owb_error_is_cancelled (other_owb));
  g_assert_false (owb_error_is_cancelled (NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json/members", test_members);
  g_test_add_func ("/error/is-cancelled", test_error_is_cancelled);
  return g_test_run ();
}
