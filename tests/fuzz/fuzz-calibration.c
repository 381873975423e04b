/* fuzz-calibration.c: the quantizer's calibration folder readers: the bytes become one or two
 * files in a temporary folder, read by the functions `owb quantize --calibration-dir` and
 * `--calibration-images` use (owb_quant_dataset_new_from_dir / _from_images), and calibrated on a
 * one-Relu model the way the command calibrates: a sample folder of .pb / .npy tensor files, two
 * such sample folders, or images (PNG, JPEG, BMP, PNM decoded and resized by the engine's
 * preprocessing graph). A folder a user points the quantizer at is untrusted: a bad file must
 * give an error, never a crash.
 *
 * Layout of the bytes: byte 0 picks the folder (bits 0-1: flat .pb sample, flat .npy sample, two
 * sample subfolders, image folder; bit 2: two files; bits 3-5: the image extension); with two
 * files, bytes 1-4 are the first one's length (little-endian, cut to what is there); the rest is
 * the files' contents. */
#include "fuzz-common.h"

#include <owb/owb-quant.h>

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp_dir;

static const char *const image_extensions[] = { "png", "jpg", "jpeg", "bmp", "ppm", "pgm", "pnm", "png" };

/* Every path the layout can make, relative to the folder; removed after each input. */
static const char *const sub_dirs[] = { "set_0", "set_1" };

static void
clear_dir (void)
{
  for (guint d = 0; d <= G_N_ELEMENTS (sub_dirs); d++)
    {
      g_autofree char *dir = d < G_N_ELEMENTS (sub_dirs) ? g_build_filename (tmp_dir, sub_dirs[d], NULL)
                                                         : g_strdup (tmp_dir);
      GDir *listing = g_dir_open (dir, 0, NULL);
      if (!listing)
        continue;
      const char *name;
      while ((name = g_dir_read_name (listing)))
        {
          g_autofree char *p = g_build_filename (dir, name, NULL);
          if (!g_file_test (p, G_FILE_TEST_IS_DIR))
            g_unlink (p);
        }
      g_dir_close (listing);
      if (d < G_N_ELEMENTS (sub_dirs))
        g_rmdir (dir);
    }
}

/* At a normal exit (a crash or a timeout leaves the folder for a look) */
static void
remove_tmp_dir (void)
{
  clear_dir ();
  g_rmdir (tmp_dir);
}

static void
write_file (const char *sub, const char *name, const uint8_t *data, size_t size)
{
  g_autofree char *dir = sub ? g_build_filename (tmp_dir, sub, NULL) : g_strdup (tmp_dir);
  g_mkdir_with_parents (dir, 0700);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  if (!g_file_set_contents (path, (const char *) data, (gssize) size, NULL))
    abort (); /* the harness's own failure, not the input's */
}

/* x -> Relu -> y, x float: [1, 3, 8, 8] for images (the preprocessing needs a fixed size), of
 * unknown shape for tensor files (any shape they hold runs). */
static OwbModel *
relu_model (gboolean image)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 10;
  owb_model_set_opset (m, "", 20);
  OwbGraph *g = m->graph = owb_graph_new ("calibrate");
  g->model = m;
  OwbValueType type;
  const int64_t dims[4] = { 1, 3, 8, 8 };
  owb_value_type_init_tensor (&type, OWB_TYPE_FLOAT, image ? 4 : -1, image ? dims : NULL);
  g_ptr_array_add (g->inputs, owb_value_info_new ("x", &type));
  OwbNode *n = owb_node_new ("Relu", "", "relu");
  owb_node_add_input (n, "x");
  owb_node_add_output (n, "y");
  owb_graph_add_node (g, n);
  g_ptr_array_add (g->outputs, owb_value_info_new ("y", &type));
  return m;
}

static void
calibrate (OwbQuantDataset *dataset, gboolean image)
{
  static OwbModel *models[2];
  if (!models[image])
    models[image] = relu_model (image);
  GError *error = NULL;
  /* first the reader alone (what the Quantize page shows), then a calibration over every sample */
  GPtrArray *names = NULL, *tensors = NULL;
  if (owb_quant_dataset_load_sample (dataset, 0, models[image], &names, &tensors, &error))
    {
      g_ptr_array_unref (names);
      g_ptr_array_unref (tensors);
    }
  g_clear_error (&error);
  const char *const tensor_names[] = { "x", "y", NULL };
  OwbQuantCalibrateOptions options;
  owb_quant_calibrate_options_init (&options);
  options.tensors = tensor_names;
  OwbQuantCalibration *cal = owb_quant_calibrate (models[image], dataset, &options, &error);
  owb_quant_calibration_free (cal);
  g_clear_error (&error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  if (tmp_dir == NULL)
    {
      tmp_dir = g_dir_make_tmp ("owb-fuzz-calibration-XXXXXX", NULL);
      if (tmp_dir == NULL)
        abort ();
      atexit (remove_tmp_dir);
    }
  clear_dir ();
  int mode = data[0] & 3;
  gboolean two = (data[0] & 4) != 0 || mode == 2;
  const char *ext = image_extensions[(data[0] >> 3) & 7];
  size_t header = two ? 5 : 1;
  if (size < header)
    return 0;
  const uint8_t *body = data + header;
  size_t n = size - header;
  size_t first = two ? MIN (n, (size_t) data[1] | (size_t) data[2] << 8 | (size_t) data[3] << 16 | (size_t) data[4] << 24) : n;
  const uint8_t *parts[2] = { body, body + first };
  size_t sizes[2] = { first, n - first };

  for (int f = 0; f < (two ? 2 : 1); f++)
    {
      g_autofree char *name = NULL;
      const char *sub = NULL;
      if (mode == 0)
        name = g_strdup_printf ("input_%d.pb", f);
      else if (mode == 1)
        name = g_strdup_printf ("input_%d.npy", f);
      else if (mode == 2)
        {
          sub = sub_dirs[f];
          name = g_strdup (f ? "input_0.npy" : "input_0.pb");
        }
      else
        name = g_strdup_printf ("image_%d.%s", f, ext);
      write_file (sub, name, parts[f], sizes[f]);
    }

  GError *error = NULL;
  OwbQuantDataset *dataset = mode == 3 ? owb_quant_dataset_new_from_images (tmp_dir, NULL, &error)
                                       : owb_quant_dataset_new_from_dir (tmp_dir, &error);
  if (dataset)
    {
      calibrate (dataset, mode == 3);
      owb_quant_dataset_free (dataset);
    }
  g_clear_error (&error);
  clear_dir ();
  return 0;
}
