/* owb-quant-images.c: image folders as calibration and evaluation data. The preprocessing is itself
 * a small ONNX graph run by the engine (ImageDecoder, Cast, Resize, normalisation, layout), so the
 * decoders and the resampling are the engine's, tested by its conformance cases. */
#include "owb-quant-private.h"

#include <string.h>

void
owb_quant_image_options_init (OwbQuantImageOptions *options)
{
  memset (options, 0, sizeof *options);
  for (int c = 0; c < 3; c++)
    options->std[c] = 1.0f;
}

gboolean
owb_quant_is_image_file_name (const char *name)
{
  static const char *const extensions[] = { ".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".pnm" };
  g_autofree char *lower = g_ascii_strdown (name, -1);
  for (guint i = 0; i < G_N_ELEMENTS (extensions); i++)
    if (g_str_has_suffix (lower, extensions[i]))
      return TRUE;
  return FALSE;
}

OwbQuantDataset *
owb_quant_dataset_new_from_images (const char *dir, const OwbQuantImageOptions *options, GError **error)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, error);
  if (d == NULL)
    return NULL;
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  const char *entry;
  while ((entry = g_dir_read_name (d)) != NULL)
    {
      char *path = g_build_filename (dir, entry, NULL);
      if (owb_quant_is_image_file_name (entry) && g_file_test (path, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (files, path);
      else
        g_free (path);
    }
  if (files->len == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: no image in it (.png, .jpg, .jpeg, .bmp, .ppm, .pgm)", dir);
      return NULL;
    }
  g_ptr_array_sort (files, _owb_quant_compare_paths);
  OwbQuantDataset *ds = g_new0 (OwbQuantDataset, 1);
  ds->source = g_strdup (dir);
  ds->images = g_steal_pointer (&files);
  if (options)
    ds->image_options = *options;
  else
    owb_quant_image_options_init (&ds->image_options);
  return ds;
}

static OwbTensor *
int64_vector (int n, const int64_t *v)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  memcpy (t->data, v, n * sizeof (int64_t));
  return t;
}

static OwbTensor *
float_vector (int n, const float *v)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 1, dims, NULL);
  memcpy (t->data, v, n * sizeof (float));
  return t;
}

static OwbNode *
add_node (OwbGraph *g, const char *op, const char *const *inputs, int n_inputs, const char *output)
{
  OwbNode *n = owb_node_new (op, "", output);
  for (int i = 0; i < n_inputs; i++)
    owb_node_add_input (n, inputs[i]);
  owb_node_add_output (n, output);
  owb_graph_add_node (g, n);
  return n;
}

/* bytes (uint8 [n]) -> ImageDecoder -> Cast -> Resize to h x w -> / 255 -> (x - mean) / std ->
 * [1, c, h, w] or [1, h, w, c]. */
static OwbModel *
preprocess_model (const OwbQuantImageOptions *o, int64_t h, int64_t w, int64_t c, gboolean nchw)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 10;
  owb_model_set_opset (m, "", 20);
  OwbGraph *g = m->graph = owb_graph_new ("image_preprocess");
  g->model = m;
  OwbValueType in_type;
  owb_value_type_init_tensor (&in_type, OWB_TYPE_UINT8, 1, NULL);
  in_type.dims[0] = OWB_DIM_UNKNOWN;
  g_ptr_array_add (g->inputs, owb_value_info_new ("bytes", &in_type));
  OwbNode *decode = add_node (g, "ImageDecoder", (const char *const[]){ "bytes" }, 1, "decoded");
  owb_node_add_attribute (decode, "pixel_format", OWB_ATTR_STRING)->s =
    g_strdup (c == 1 ? "Grayscale" : o->bgr ? "BGR" : "RGB");
  OwbAttribute *a = &decode->attributes[decode->n_attributes - 1];
  a->s_len = strlen (a->s);
  OwbNode *cast = add_node (g, "Cast", (const char *const[]){ "decoded" }, 1, "pixels");
  owb_node_add_attribute (cast, "to", OWB_ATTR_INT)->i = OWB_TYPE_FLOAT;
  int64_t sizes[3] = { h, w, c };
  owb_graph_add_initializer (g, "sizes", int64_vector (3, sizes));
  OwbNode *resize = add_node (g, "Resize", (const char *const[]){ "pixels", "", "", "sizes" }, 4, "resized");
  OwbAttribute *mode = owb_node_add_attribute (resize, "mode", OWB_ATTR_STRING);
  mode->s = g_strdup ("linear");
  mode->s_len = strlen (mode->s);
  owb_node_add_attribute (resize, "antialias", OWB_ATTR_INT)->i = 1;
  /* x / 255 - mean) / std == x * (1 / (255 std)) - mean / std */
  float mul[3], sub[3];
  for (int k = 0; k < c; k++)
    {
      float sd = o->std[k] != 0 ? o->std[k] : 1.0f;
      mul[k] = 1.0f / (255.0f * sd);
      sub[k] = o->mean[k] / sd;
    }
  owb_graph_add_initializer (g, "mul", float_vector ((int) c, mul));
  owb_graph_add_initializer (g, "sub", float_vector ((int) c, sub));
  add_node (g, "Mul", (const char *const[]){ "resized", "mul" }, 2, "scaled");
  add_node (g, "Sub", (const char *const[]){ "scaled", "sub" }, 2, "normalized");
  const char *last = "normalized";
  if (nchw)
    {
      OwbNode *t = add_node (g, "Transpose", (const char *const[]){ "normalized" }, 1, "planar");
      OwbAttribute *perm = owb_node_add_attribute (t, "perm", OWB_ATTR_INTS);
      perm->n = 3;
      perm->ints = g_new (int64_t, 3);
      perm->ints[0] = 2, perm->ints[1] = 0, perm->ints[2] = 1;
      last = "planar";
    }
  int64_t zero[1] = { 0 };
  owb_graph_add_initializer (g, "axes", int64_vector (1, zero));
  add_node (g, "Unsqueeze", (const char *const[]){ last, "axes" }, 2, "image");
  OwbValueType out_type;
  owb_value_type_init_tensor (&out_type, OWB_TYPE_FLOAT, 4, NULL);
  int64_t od[4] = { 1, nchw ? c : h, nchw ? h : w, nchw ? w : c };
  for (int d = 0; d < 4; d++)
    out_type.dims[d] = OWB_DIM_VALUE (od[d]);
  g_ptr_array_add (g->outputs, owb_value_info_new ("image", &out_type));
  return m;
}

gboolean
_owb_quant_images_load (OwbQuantDataset *ds, guint i, const OwbModel *model, GPtrArray **names, GPtrArray **tensors,
                        GError **error)
{
  const char *path = g_ptr_array_index (ds->images, i);
  g_autoptr (GPtrArray) feeds = owb_graph_dup_feed_inputs (model->graph);
  if (feeds->len != 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "an image folder feeds models with one input; this one has %u: give a folder of input_K.pb samples",
                   feeds->len);
      return FALSE;
    }
  const OwbValueInfo *info = g_ptr_array_index (feeds, 0);
  const OwbValueType *t = &info->type;
  if (!info->has_type || t->kind != OWB_VALUE_TENSOR || t->rank != 4 || t->dtype != OWB_TYPE_FLOAT)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' is not a float image tensor of rank 4 ([N, C, H, W] or [N, H, W, C])", info->name);
      return FALSE;
    }
  const OwbQuantImageOptions *o = &ds->image_options;
  int64_t d[4];
  for (int k = 0; k < 4; k++)
    d[k] = owb_dim_is_known (t->dims[k]) ? t->dims[k].value : 0;
  gboolean nchw = o->layout == 1 || (o->layout == 0 && (d[1] == 3 || d[1] == 1));
  if (o->layout == 0 && !nchw && d[3] != 3 && d[3] != 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s': no axis of 3 (or 1) channels to read the layout from; choose NCHW or NHWC", info->name);
      return FALSE;
    }
  int64_t c = nchw ? d[1] : d[3];
  if (c != 1)
    c = 3;
  int64_t h = o->height > 0 ? o->height : nchw ? d[2] : d[1];
  int64_t w = o->width > 0 ? o->width : nchw ? d[3] : d[2];
  if (h <= 0 || w <= 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' has no fixed height and width: give the image size", info->name);
      return FALSE;
    }
  int64_t key[4] = { h, w, c, nchw };
  if (ds->preprocess == NULL || memcmp (key, ds->preprocess_dims, sizeof key) != 0)
    {
      g_clear_pointer (&ds->preprocess, owb_session_free);
      g_autoptr (OwbModel) pre = preprocess_model (o, h, w, c, nchw);
      ds->preprocess = _owb_quant_session_new (pre, 1, error);
      if (ds->preprocess == NULL)
        {
          g_prefix_error (error, "image preprocessing: ");
          return FALSE;
        }
      memcpy (ds->preprocess_dims, key, sizeof key);
    }
  gchar *bytes;
  gsize len;
  if (!g_file_get_contents (path, &bytes, &len, error))
    return FALSE;
  int64_t bd[1] = { (int64_t) len };
  g_autoptr (OwbTensor) raw = owb_tensor_new_wrap (OWB_TYPE_UINT8, 1, bd, bytes, g_free, bytes, error);
  if (raw == NULL)
    {
      g_free (bytes);
      return FALSE;
    }
  const char *in_names[] = { "bytes" };
  OwbTensor *image = NULL;
  if (!owb_session_run (ds->preprocess, 1, in_names, &raw, 1, NULL, &image, NULL, NULL, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  GPtrArray *out_names = g_ptr_array_new ();
  g_ptr_array_add (out_names, info->name);
  GPtrArray *values = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  g_ptr_array_add (values, image);
  *names = out_names;
  *tensors = values;
  return TRUE;
}
