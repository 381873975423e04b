/* test-prof-ort.c: ONNX Runtime's profile of the sample model (data/, made by make-ort-profile.py)
 * imported as a run: its nodes, iterations and shapes; stored and read back; compared with an owb
 * run of the same model node by node; files that are not such profiles refused. */
#include "prof-test-util.h"

#include <math.h>

static OwbProfRun *
import_sample (void)
{
  GError *error = NULL;
  g_autofree char *profile = prof_test_data_path ("tiny-cnn-ort-profile.json");
  g_autofree char *model = prof_test_sample_path ();
  OwbProfRun *run = owb_prof_import_ort (profile, model, &error);
  g_assert_no_error (error);
  g_assert_nonnull (run);
  return run;
}

static void
test_import (void)
{
  g_autoptr (OwbProfRun) run = import_sample ();
  g_assert_cmpstr (run->source, ==, "onnxruntime");
  g_assert_cmpstr (run->providers, ==, "CPUExecutionProvider");
  g_assert_true (g_str_has_prefix (run->model_hash, "sha256:"));
  g_assert_cmpuint (run->nodes->len, ==, 10);
  g_assert_cmpuint (run->iterations->len, ==, 3);
  g_assert_cmpuint (run->events->len, ==, 30);
  const OwbProfNode *conv1 = NULL;
  for (guint n = 0; n < run->nodes->len; n++)
    {
      const OwbProfNode *node = g_ptr_array_index (run->nodes, n);
      if (strcmp (node->name, "conv1") == 0)
        conv1 = node;
    }
  g_assert_nonnull (conv1);
  g_assert_cmpstr (conv1->op_type, ==, "Conv");
  g_assert_cmpstr (conv1->provider, ==, "CPUExecutionProvider");
  /* the model gave its edges */
  g_assert_cmpstr (conv1->inputs[0], ==, "image");
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      const OwbProfIteration *it = &g_array_index (run->iterations, OwbProfIteration, ev->iteration);
      g_assert_cmpuint (ev->iteration, ==, e / 10);
      /* inside its model_run */
      g_assert_cmpint (ev->start_ns, >=, it->start_ns);
      g_assert_cmpint (ev->start_ns + ev->duration_ns, <=, it->start_ns + it->duration_ns);
      g_assert_cmpint (ev->thread, ==, 0);
      g_assert_cmpint (ev->self_ns, ==, ev->duration_ns);
      const OwbProfNode *node = g_ptr_array_index (run->nodes, ev->node);
      if (node == conv1)
        {
          g_assert_cmpstr (ev->input_shapes, ==, "float32[1,3,32,32] float32[8,3,3,3] float32[8]");
          g_assert_cmpstr (ev->output_shapes, ==, "float32[1,8,32,32]");
          g_assert_cmpint (ev->output_bytes, ==, 8 * 32 * 32 * 4);
        }
    }
  double total = 0;
  g_autoptr (GArray) path = owb_prof_run_dup_critical_path (run, &total);
  g_assert_cmpuint (path->len, ==, 10);
}

static void
test_store_and_compare (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "runs.sqlite", NULL);
  g_autoptr (OwbProfRun) ort = import_sample ();
  g_autoptr (OwbProfDb) db = owb_prof_db_open (path, TRUE, &error);
  g_assert_true (owb_prof_db_store_run (db, ort, &error));
  g_assert_no_error (error);
  g_autoptr (OwbProfRun) back = owb_prof_db_load_run (db, ort->id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->events->len, ==, ort->events->len);
  g_assert_cmpstr (back->source, ==, "onnxruntime");

  g_autofree char *model_path = prof_test_sample_path ();
  g_autoptr (OwbModel) model = owb_model_load_file (model_path, &error);
  g_assert_no_error (error);
  g_autoptr (OwbProfRun) ours = prof_test_record (model, OWB_OPTIMIZE_DISABLED, 1, 3);
  g_autoptr (GPtrArray) nodes = owb_prof_compare_nodes (ours, back);
  /* every node by name, though the providers are named differently */
  g_assert_cmpuint (owb_prof_deltas_count_matched (nodes), ==, 10);
  g_assert_cmpuint (nodes->len, ==, 10);
  g_autoptr (GPtrArray) ops = owb_prof_compare_ops (ours, back);
  g_assert_cmpuint (owb_prof_deltas_count_matched (ops), ==, 8);
  prof_test_tmpdir_remove (dir);
}

static void
test_bad_files (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *garbage = g_build_filename (dir, "garbage.json", NULL);
  g_assert_true (g_file_set_contents (garbage, "{\"traceEvents\": [1, 2", -1, NULL));
  g_assert_null (owb_prof_import_ort (garbage, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_autofree char *empty = g_build_filename (dir, "empty.json", NULL);
  g_assert_true (g_file_set_contents (empty, "[{\"cat\": \"Session\", \"name\": \"model_run\", \"ts\": 1, \"dur\": 5}]", -1, NULL));
  g_assert_null (owb_prof_import_ort (empty, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "no node events"));
  g_clear_error (&error);
  g_autofree char *missing = g_build_filename (dir, "missing.json", NULL);
  g_assert_null (owb_prof_import_ort (missing, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_clear_error (&error);
  /* the traceEvents object form, without a model, and no model_run: one iteration */
  g_autofree char *object = g_build_filename (dir, "object.json", NULL);
  g_assert_true (g_file_set_contents (object,
                                      "{\"traceEvents\": [{\"cat\": \"Node\", \"name\": \"n_kernel_time\", \"ts\": 10, \"dur\": 4,"
                                      " \"tid\": 7, \"args\": {\"op_name\": \"Relu\", \"provider\": \"CPUExecutionProvider\"}},"
                                      " {\"cat\": \"Node\", \"name\": \"m_kernel_time\", \"ts\": 20, \"dur\": 2, \"tid\": 9,"
                                      " \"args\": {\"op_name\": \"Add\"}}]}", -1, NULL));
  g_autoptr (OwbProfRun) run = owb_prof_import_ort (object, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (run->iterations->len, ==, 1);
  g_assert_cmpint (g_array_index (run->iterations, OwbProfIteration, 0).duration_ns, ==, 12000);
  g_assert_cmpuint (run->events->len, ==, 2);
  g_assert_cmpuint (g_array_index (run->events, OwbProfEvent, 1).thread, ==, 1);
  prof_test_tmpdir_remove (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prof-ort/import", test_import);
  g_test_add_func ("/prof-ort/store-and-compare", test_store_and_compare);
  g_test_add_func ("/prof-ort/bad-files", test_bad_files);
  return g_test_run ();
}
