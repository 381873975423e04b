/* test-tensor-file.c: tensor files: .pb (TensorProto, sequences, optionals) and .npy round trips,
 * and malformed files refused with errors. */
#include <owb/owb.h>

#include <glib/gstdio.h>
#include <string.h>

static char *tmp_dir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static const OwbDataType pb_types[] = {
  OWB_TYPE_FLOAT,      OWB_TYPE_UINT8,          OWB_TYPE_INT8,       OWB_TYPE_UINT16,        OWB_TYPE_INT16,
  OWB_TYPE_INT32,      OWB_TYPE_INT64,          OWB_TYPE_STRING,     OWB_TYPE_BOOL,          OWB_TYPE_FLOAT16,
  OWB_TYPE_DOUBLE,     OWB_TYPE_UINT32,         OWB_TYPE_UINT64,     OWB_TYPE_COMPLEX64,     OWB_TYPE_COMPLEX128,
  OWB_TYPE_BFLOAT16,   OWB_TYPE_FLOAT8E4M3FN,   OWB_TYPE_FLOAT8E5M2, OWB_TYPE_FLOAT8E4M3FNUZ, OWB_TYPE_FLOAT8E5M2FNUZ,
  OWB_TYPE_FLOAT8E8M0, OWB_TYPE_UINT4,          OWB_TYPE_INT4,       OWB_TYPE_FLOAT4E2M1,    OWB_TYPE_UINT2,
  OWB_TYPE_INT2,       OWB_TYPE_FLOAT6E2M3,     OWB_TYPE_FLOAT6E3M2,
};

static OwbTensor *
make_tensor (OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  g_assert_nonnull (t);
  if (dtype == OWB_TYPE_STRING)
    for (int64_t i = 0; i < t->nelems; i++)
      {
        g_free (((char **) t->data)[i]);
        ((char **) t->data)[i] = g_strdup_printf ("s%" G_GINT64_FORMAT, i * i);
      }
  else if (dtype == OWB_TYPE_BOOL)
    for (int64_t i = 0; i < t->nelems; i++)
      ((guint8 *) t->data)[i] = (i % 3) == 1;
  else if (owb_data_type_packed_bits (dtype))
    {
      /* One element per byte; the signed types sign-extended. */
      int bits = owb_data_type_packed_bits (dtype);
      for (int64_t i = 0; i < t->nelems; i++)
        {
          int v = (int) ((i * 5 + 3) % (1 << bits));
          if ((dtype == OWB_TYPE_INT4 || dtype == OWB_TYPE_INT2) && v >= (1 << (bits - 1)))
            v -= 1 << bits;
          ((gint8 *) t->data)[i] = (gint8) v;
        }
    }
  else
    for (gsize i = 0; i < t->nbytes; i++)
      ((guint8 *) t->data)[i] = (guint8) (i * 31 + dtype);
  return t;
}

static void
assert_tensors_equal (const OwbTensor *a, const OwbTensor *b)
{
  g_assert_cmpint (a->kind, ==, b->kind);
  g_assert_cmpint (a->dtype, ==, b->dtype);
  if (a->kind != OWB_VALUE_TENSOR)
    {
      guint na = a->sequence ? a->sequence->len : 0, nb = b->sequence ? b->sequence->len : 0;
      g_assert_cmpuint (na, ==, nb);
      for (guint i = 0; i < na; i++)
        assert_tensors_equal (g_ptr_array_index (a->sequence, i), g_ptr_array_index (b->sequence, i));
      return;
    }
  g_assert_cmpint (a->rank, ==, b->rank);
  for (int i = 0; i < a->rank; i++)
    g_assert_cmpint (a->dims[i], ==, b->dims[i]);
  g_assert_cmpint (a->nelems, ==, b->nelems);
  if (a->dtype == OWB_TYPE_STRING)
    for (int64_t i = 0; i < a->nelems; i++)
      g_assert_cmpstr (((char **) a->data)[i], ==, ((char **) b->data)[i]);
  else if (a->nelems)
    {
      gsize size = owb_data_type_packed_bits (a->dtype) ? 1 : owb_data_type_size (a->dtype);
      g_assert_cmpmem (a->data, (gsize) a->nelems * size, b->data, (gsize) b->nelems * size);
    }
}

static void
test_pb_roundtrip (void)
{
  int64_t shapes[][3] = { { 2, 3, 4 }, { 5 }, { 0, 3 } };
  int ranks[] = { 3, 1, 2 };
  for (gsize i = 0; i < G_N_ELEMENTS (pb_types); i++)
    for (int s = -1; s < 3; s++)
      {
        GError *error = NULL;
        /* s == -1: a scalar */
        g_autoptr (OwbTensor) t = make_tensor (pb_types[i], s < 0 ? 0 : ranks[s], s < 0 ? NULL : shapes[s]);
        g_autofree char *path = tmp_path ("t.pb");
        g_autofree char *name = NULL;
        g_assert_true (owb_tensor_save_pb_file (t, "my_tensor", path, &error));
        g_assert_no_error (error);
        g_autoptr (OwbTensor) back = owb_tensor_load_file (path, &name, &error);
        g_assert_no_error (error);
        g_assert_cmpstr (name, ==, "my_tensor");
        assert_tensors_equal (t, back);

        /* Also from memory, without asking for the name. */
        gchar *data;
        gsize len;
        g_assert_true (g_file_get_contents (path, &data, &len, NULL));
        g_autoptr (OwbTensor) again = owb_tensor_load_pb_data (data, len, NULL, &error);
        g_assert_no_error (error);
        assert_tensors_equal (t, again);
        g_free (data);
      }
}

static void
test_pb_sequence_optional (void)
{
  GError *error = NULL;
  int64_t d2[1] = { 2 }, d3[2] = { 3, 1 };
  g_autoptr (OwbTensor) seq = owb_tensor_new_sequence (OWB_TYPE_INT64);
  g_ptr_array_add (seq->sequence, make_tensor (OWB_TYPE_INT64, 1, d2));
  g_ptr_array_add (seq->sequence, make_tensor (OWB_TYPE_INT64, 2, d3));
  g_ptr_array_add (seq->sequence, make_tensor (OWB_TYPE_INT64, 1, d2));
  g_autofree char *path = tmp_path ("seq.pb");
  g_assert_true (owb_tensor_save_pb_file (seq, "seq", path, &error));
  g_assert_no_error (error);
  g_autofree char *name = NULL;
  g_autoptr (OwbTensor) back = owb_tensor_load_file (path, &name, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "seq");
  assert_tensors_equal (seq, back);

  /* An empty optional, and an optional holding a sequence. */
  g_autoptr (OwbTensor) none = owb_tensor_new_sequence (OWB_TYPE_UNDEFINED);
  none->kind = OWB_VALUE_OPTIONAL;
  g_assert_true (owb_tensor_save_pb_file (none, "opt", path, &error));
  g_assert_no_error (error);
  g_autoptr (OwbTensor) none_back = owb_tensor_load_file (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (none_back->kind, ==, OWB_VALUE_OPTIONAL);
  g_assert_cmpuint (none_back->sequence->len, ==, 0);

  g_autoptr (OwbTensor) opt = owb_tensor_new_sequence (OWB_TYPE_INT64);
  opt->kind = OWB_VALUE_OPTIONAL;
  g_ptr_array_add (opt->sequence, owb_tensor_ref (seq));
  g_assert_true (owb_tensor_save_pb_file (opt, "opt", path, &error));
  g_assert_no_error (error);
  g_autoptr (OwbTensor) opt_back = owb_tensor_load_file (path, NULL, &error);
  g_assert_no_error (error);
  assert_tensors_equal (opt, opt_back);

  /* A hand-made sequence of one map without keys or values (int64 keys): read as an empty map. */
  static const guint8 seq_of_maps[] = { 0x0a, 0x01, 's', 0x10, 0x04, 0x32, 0x02, 0x10, 0x07 };
  g_autoptr (OwbTensor) empty_maps = owb_tensor_load_pb_data (seq_of_maps, sizeof seq_of_maps, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (empty_maps->kind, ==, OWB_VALUE_SEQUENCE);
  g_assert_cmpuint (empty_maps->sequence->len, ==, 1);
  const OwbTensor *empty = g_ptr_array_index (empty_maps->sequence, 0);
  g_assert_cmpint (empty->kind, ==, OWB_VALUE_MAP);
  g_assert_cmpint (((const OwbTensor *) g_ptr_array_index (empty->sequence, 0))->nelems, ==, 0);

  /* A map with keys but no values is refused. */
  static const guint8 keys_only[] = { 0x0a, 0x01, 's', 0x10, 0x04, 0x32, 0x04, 0x10, 0x07, 0x18, 0x05 };
  g_assert_null (owb_tensor_load_pb_data (keys_only, sizeof keys_only, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
}

static void
test_pb_conformance_data (void)
{
  static const struct {
    const char *path;
    OwbValueKind kind;
    guint len;
  } cases[] = {
    { "/tmp/onnx-data/node/test_identity_sequence/test_data_set_0/input_0.pb", OWB_VALUE_SEQUENCE, 2 },
    { "/tmp/onnx-data/node/test_optional_get_element_optional_sequence/test_data_set_0/input_0.pb",
      OWB_VALUE_OPTIONAL, 1 },
    { "/tmp/onnx-data/node/test_optional_has_element_empty_optional_input/test_data_set_0/input_0.pb",
      OWB_VALUE_OPTIONAL, 0 },
    { "/tmp/onnx-data/node/test_add/test_data_set_0/input_0.pb", OWB_VALUE_TENSOR, 0 },
  };
  if (!g_file_test (cases[0].path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no ONNX conformance data");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GError *error = NULL;
      /* The one-tensor optional of test_optional_has_element_tensor_input reads as a sequence
       * here: without the model's input type the bytes cannot tell. */
      g_autoptr (OwbTensor) t = owb_tensor_load_file (cases[i].path, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (t->kind, ==, cases[i].kind);
      if (t->kind != OWB_VALUE_TENSOR)
        g_assert_cmpuint (t->sequence->len, ==, cases[i].len);
    }
}

/* Internal (engine/onnx/owb-onnx-private.h): loading with the kind the model expects. */
OwbTensor *_owb_tensor_load_pb_data_for_kind (const void *data, gsize size, OwbValueKind kind, char **name,
                                              GError **error);

static OwbTensor *
load_for_kind (const char *path, OwbValueKind kind, GError **error)
{
  gchar *data;
  gsize len;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  OwbTensor *t = _owb_tensor_load_pb_data_for_kind (data, len, kind, NULL, error);
  g_free (data);
  return t;
}

static OwbTensor *
make_map (OwbDataType key_type, int64_t n, int salt)
{
  OwbTensor *keys = owb_tensor_new (key_type, 1, &n, NULL);
  OwbTensor *values = owb_tensor_new (OWB_TYPE_FLOAT, 1, &n, NULL);
  for (int64_t i = 0; i < n; i++)
    {
      if (key_type == OWB_TYPE_STRING)
        ((char **) keys->data)[i] = g_strdup_printf ("class %" G_GINT64_FORMAT, i);
      else
        ((int64_t *) keys->data)[i] = 10 - 3 * i;
      ((float *) values->data)[i] = 0.125f * (float) (i + salt);
    }
  OwbTensor *map = owb_tensor_new_map (keys, values);
  g_assert_nonnull (map);
  return map;
}

static void
test_pb_maps (void)
{
  GError *error = NULL;
  g_autofree char *path = tmp_path ("map.pb");
  const OwbDataType key_types[] = { OWB_TYPE_INT64, OWB_TYPE_STRING };
  for (guint k = 0; k < G_N_ELEMENTS (key_types); k++)
    {
      /* A lone map. */
      g_autoptr (OwbTensor) map = make_map (key_types[k], 3, 1);
      OwbValueType type;
      owb_tensor_get_value_type (map, &type);
      g_assert_cmpint (type.kind, ==, OWB_VALUE_MAP);
      g_assert_cmpint (type.key_dtype, ==, key_types[k]);
      g_assert_cmpint (type.dtype, ==, OWB_TYPE_FLOAT);
      g_assert_true (owb_tensor_save_pb_file (map, "m", path, &error));
      g_assert_no_error (error);
      g_autofree char *name = NULL;
      g_autoptr (OwbTensor) back = owb_tensor_load_file (path, &name, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (name, ==, "m");
      assert_tensors_equal (map, back);
      g_autoptr (OwbTensor) hinted = load_for_kind (path, OWB_VALUE_MAP, &error);
      g_assert_no_error (error);
      assert_tensors_equal (map, hinted);

      /* A sequence of maps, as ZipMap produces, survives a copy and a round trip. */
      g_autoptr (OwbTensor) seq = owb_tensor_new_sequence (OWB_TYPE_FLOAT);
      for (int r = 0; r < 4; r++)
        g_ptr_array_add (seq->sequence, make_map (key_types[k], 3, r));
      g_autoptr (OwbTensor) copy = owb_tensor_dup (seq);
      assert_tensors_equal (seq, copy);
      owb_tensor_get_value_type (seq, &type);
      g_assert_cmpint (type.kind, ==, OWB_VALUE_SEQUENCE);
      g_assert_cmpint (type.elem_kind, ==, OWB_VALUE_MAP);
      g_assert_cmpint (type.key_dtype, ==, key_types[k]);
      g_assert_true (owb_tensor_save_pb_file (seq, "probabilities", path, &error));
      g_assert_no_error (error);
      g_autofree char *seq_name = NULL;
      g_autoptr (OwbTensor) seq_back = owb_tensor_load_file (path, &seq_name, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (seq_name, ==, "probabilities");
      assert_tensors_equal (seq, seq_back);
      g_autoptr (OwbTensor) seq_hinted = load_for_kind (path, OWB_VALUE_SEQUENCE, &error);
      g_assert_no_error (error);
      assert_tensors_equal (seq, seq_hinted);
    }

  /* Keys and values of different lengths make no map. */
  int64_t two = 2, three = 3;
  g_assert_null (owb_tensor_new_map (owb_tensor_new (OWB_TYPE_INT64, 1, &two, NULL),
                                     owb_tensor_new (OWB_TYPE_FLOAT, 1, &three, NULL)));
  g_assert_null (owb_tensor_new_map (owb_tensor_new (OWB_TYPE_FLOAT, 1, &two, NULL),
                                     owb_tensor_new (OWB_TYPE_FLOAT, 1, &two, NULL)));
}

static void
test_pb_kind_hint (void)
{
  const char *one = "/tmp/onnx-data/node/test_optional_has_element_tensor_input/test_data_set_0/input_0.pb";
  const char *plain = "/tmp/onnx-data/node/test_add/test_data_set_0/input_0.pb";
  if (!g_file_test (one, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no ONNX conformance data");
      return;
    }
  GError *error = NULL;
  g_autoptr (OwbTensor) opt = load_for_kind (one, OWB_VALUE_OPTIONAL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (opt->kind, ==, OWB_VALUE_OPTIONAL);
  g_assert_cmpuint (opt->sequence->len, ==, 1);
  g_assert_cmpint (((OwbTensor *) g_ptr_array_index (opt->sequence, 0))->kind, ==, OWB_VALUE_TENSOR);
  g_autoptr (OwbTensor) seq = load_for_kind (one, OWB_VALUE_SEQUENCE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (seq->kind, ==, OWB_VALUE_SEQUENCE);
  g_autoptr (OwbTensor) wrapped = load_for_kind (plain, OWB_VALUE_OPTIONAL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (wrapped->kind, ==, OWB_VALUE_OPTIONAL);
  g_assert_cmpuint (wrapped->sequence->len, ==, 1);
  g_assert_null (load_for_kind (plain, OWB_VALUE_SEQUENCE, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
}

static void
test_pb_malformed (void)
{
  GError *error = NULL;
  g_assert_null (owb_tensor_load_pb_data ("", 0, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* float [3] with 8 bytes of raw data. */
  static const guint8 short_raw[] = { 0x08, 0x03, 0x10, 0x01, 0x42, 0x01, 'x', 0x4a, 0x08, 0, 0, 0, 0, 0, 0, 0, 0 };
  g_assert_null (owb_tensor_load_pb_data (short_raw, sizeof short_raw, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "'x'"));
  g_clear_error (&error);

  /* Truncated in the middle of raw_data. */
  g_assert_null (owb_tensor_load_pb_data (short_raw, sizeof short_raw - 3, NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  GRand *rand = g_rand_new_with_seed (99);
  for (int round = 0; round < 500; round++)
    {
      guint8 junk[256];
      gsize n = g_rand_int_range (rand, 1, sizeof junk);
      for (gsize i = 0; i < n; i++)
        junk[i] = g_rand_int (rand);
      OwbTensor *t = owb_tensor_load_pb_data (junk, n, NULL, &error);
      g_assert_true ((t == NULL) != (error == NULL));
      g_clear_error (&error);
      owb_tensor_unref (t);
    }
  g_rand_free (rand);
}

static const OwbDataType npy_types[] = {
  OWB_TYPE_FLOAT, OWB_TYPE_DOUBLE, OWB_TYPE_FLOAT16, OWB_TYPE_INT8,   OWB_TYPE_UINT8,     OWB_TYPE_INT16,
  OWB_TYPE_UINT16, OWB_TYPE_INT32, OWB_TYPE_UINT32, OWB_TYPE_INT64,   OWB_TYPE_UINT64,    OWB_TYPE_BOOL,
  OWB_TYPE_COMPLEX64, OWB_TYPE_COMPLEX128,
};

static void
test_npy_roundtrip (void)
{
  int64_t shapes[][4] = { { 2, 3, 4, 5 }, { 7 }, { 3, 0 } };
  int ranks[] = { 4, 1, 2 };
  for (gsize i = 0; i < G_N_ELEMENTS (npy_types); i++)
    for (int s = -1; s < 3; s++)
      {
        GError *error = NULL;
        g_autoptr (OwbTensor) t = make_tensor (npy_types[i], s < 0 ? 0 : ranks[s], s < 0 ? NULL : shapes[s]);
        g_autofree char *path = tmp_path ("t.npy");
        g_assert_true (owb_tensor_save_npy_file (t, path, &error));
        g_assert_no_error (error);
        g_autofree char *name = NULL;
        g_autoptr (OwbTensor) back = owb_tensor_load_file (path, &name, &error);
        g_assert_no_error (error);
        g_assert_cmpstr (name, ==, "");
        assert_tensors_equal (t, back);

        /* Version 1.0, data 64-byte aligned, header ending in a newline, as numpy writes. */
        gchar *data;
        gsize len;
        g_assert_true (g_file_get_contents (path, &data, &len, NULL));
        g_assert_cmpint ((guint8) data[6], ==, 1);
        gsize header_len = (guint8) data[8] | ((guint8) data[9] << 8);
        g_assert_cmpuint ((10 + header_len) % 64, ==, 0);
        g_assert_cmpint (data[10 + header_len - 1], ==, '\n');
        g_assert_true (g_str_has_prefix (data + 10, "{'descr': '"));
        g_free (data);
      }
  /* Types numpy has no spelling for are refused. */
  GError *error = NULL;
  g_autoptr (OwbTensor) bf = make_tensor (OWB_TYPE_BFLOAT16, 1, (int64_t[]){ 2 });
  g_autofree char *path = tmp_path ("bf.npy");
  g_assert_false (owb_tensor_save_npy_file (bf, path, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_TYPE);
  g_clear_error (&error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* An .npy image with the given version and header text, followed by `data`. */
static GBytes *
npy_bytes (int major, const char *header, const void *data, gsize data_len)
{
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) "\x93NUMPY", 6);
  guint8 version[2] = { (guint8) major, 0 };
  g_byte_array_append (b, version, 2);
  gsize hl = strlen (header);
  guint8 len[4] = { hl & 0xff, (hl >> 8) & 0xff, (hl >> 16) & 0xff, (hl >> 24) & 0xff };
  g_byte_array_append (b, len, major == 1 ? 2 : 4);
  g_byte_array_append (b, (const guint8 *) header, hl);
  if (data_len)
    g_byte_array_append (b, data, data_len);
  return g_byte_array_free_to_bytes (b);
}

static OwbTensor *
load_npy (GBytes *bytes, GError **error)
{
  gsize size;
  const void *data = g_bytes_get_data (bytes, &size);
  return owb_tensor_load_npy_data (data, size, error);
}

static void
test_npy_headers (void)
{
  GError *error = NULL;
  float f[6] = { 1, 2, 3, 4, 5, 6 };

  /* Versions 2.0 and 3.0 have 4-byte header lengths. */
  for (int major = 2; major <= 3; major++)
    {
      g_autoptr (GBytes) b = npy_bytes (major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f,
                                        sizeof f);
      g_autoptr (OwbTensor) t = load_npy (b, &error);
      g_assert_no_error (error);
      g_assert_cmpint (t->rank, ==, 2);
      g_assert_cmpint (t->dims[1], ==, 3);
      g_assert_cmpfloat (((float *) t->data)[5], ==, 6);
    }

  /* Keys in another order, double quotes, no trailing comma, 1-D "(6,)". */
  g_autoptr (GBytes) b1 = npy_bytes (1, "{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f4\"}", f, sizeof f);
  g_autoptr (OwbTensor) t1 = load_npy (b1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (t1->rank, ==, 1);
  g_assert_cmpint (t1->dims[0], ==, 6);

  /* A scalar. */
  g_autoptr (GBytes) b2 = npy_bytes (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f, 4);
  g_autoptr (OwbTensor) t2 = load_npy (b2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (t2->rank, ==, 0);
  g_assert_cmpfloat (((float *) t2->data)[0], ==, 1);

  /* Big-endian data is swapped. */
  guint8 be[8] = { 0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xfe };
  g_autoptr (GBytes) b3 = npy_bytes (1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be, 8);
  g_autoptr (OwbTensor) t3 = load_npy (b3, &error);
  g_assert_no_error (error);
  g_assert_cmpint (((gint32 *) t3->data)[0], ==, 1);
  g_assert_cmpint (((gint32 *) t3->data)[1], ==, -2);

  static const struct {
    int major;
    const char *header;
    gsize data_len;
    const char *expect;
  } bad[] = {
    { 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "Fortran" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20, "bytes of data" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28, "bytes of data" },
    { 1, "{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", 40, "not supported" },
    { 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "structured" },
    { 1, "{'descr': '<f4', 'shape': (2,), }", 8, "malformed header" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8, "malformed header" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 8, "shape" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, "shape" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4, "shape" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3037000500, 3037000500, 4), }", 8, "overflow" },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", 8, "malformed header" },
    { 1, "{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", 8, "malformed header" },
    { 1, "", 0, "malformed header" },
    { 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, "version" },
  };
  guint8 zeros[64] = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GBytes) b = npy_bytes (bad[i].major, bad[i].header, zeros, bad[i].data_len);
      OwbTensor *t = load_npy (b, &error);
      if (t || !error || !strstr (error->message, bad[i].expect))
        g_error ("case %zu: %s (wanted '%s')", i, error ? error->message : "loaded", bad[i].expect);
      g_clear_error (&error);
    }

  /* A header length that runs past the end of the file. */
  static const guint8 truncated[] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0x7f, '{' };
  g_assert_null (owb_tensor_load_npy_data (truncated, sizeof truncated, &error));
  g_assert_nonnull (strstr (error->message, "truncated"));
  g_clear_error (&error);
  g_assert_null (owb_tensor_load_npy_data ("PK\x03\x04", 4, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* Every truncation of a valid file fails cleanly; random bytes in the header never crash. */
  g_autoptr (GBytes) good = npy_bytes (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f, sizeof f);
  gsize size;
  const guint8 *data = g_bytes_get_data (good, &size);
  for (gsize cut = 0; cut < size; cut++)
    {
      g_assert_null (owb_tensor_load_npy_data (data, cut, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
    }
  GRand *rand = g_rand_new_with_seed (7);
  guint8 *copy = g_memdup2 (data, size);
  for (int round = 0; round < 2000; round++)
    {
      memcpy (copy, data, size);
      for (int k = 0; k < 3; k++)
        copy[g_rand_int_range (rand, 8, size - sizeof f)] = g_rand_int_range (rand, 0, 128);
      OwbTensor *t = owb_tensor_load_npy_data (copy, size, &error);
      g_assert_true ((t == NULL) != (error == NULL));
      g_clear_error (&error);
      owb_tensor_unref (t);
    }
  g_free (copy);
  g_rand_free (rand);
}

static void
test_load_file_detection (void)
{
  GError *error = NULL;
  /* An .npy file under another name is still recognised by its magic. */
  g_autoptr (OwbTensor) t = make_tensor (OWB_TYPE_INT32, 2, (int64_t[]){ 2, 2 });
  g_autofree char *npy = tmp_path ("a.npy");
  g_autofree char *renamed = tmp_path ("a.bin");
  g_assert_true (owb_tensor_save_npy_file (t, npy, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_rename (npy, renamed), ==, 0);
  g_autoptr (OwbTensor) back = owb_tensor_load_file (renamed, NULL, &error);
  g_assert_no_error (error);
  assert_tensors_equal (t, back);

  g_autofree char *missing = tmp_path ("missing.pb");
  g_assert_null (owb_tensor_load_file (missing, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "missing.pb"));
  g_clear_error (&error);

  /* A .npy name with .pb content is an error that names the file. */
  g_autofree char *pb = tmp_path ("b.pb");
  g_autofree char *wrong = tmp_path ("b.npy");
  g_assert_true (owb_tensor_save_pb_file (t, "b", pb, &error));
  g_assert_cmpint (g_rename (pb, wrong), ==, 0);
  g_assert_null (owb_tensor_load_file (wrong, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "b.npy"));
  g_clear_error (&error);
}

static void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("owb-tensor-file-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  g_test_add_func ("/tensor-file/pb-roundtrip", test_pb_roundtrip);
  g_test_add_func ("/tensor-file/pb-sequence-optional", test_pb_sequence_optional);
  g_test_add_func ("/tensor-file/pb-conformance-data", test_pb_conformance_data);
  g_test_add_func ("/tensor-file/pb-kind-hint", test_pb_kind_hint);
  g_test_add_func ("/tensor-file/pb-malformed", test_pb_malformed);
  g_test_add_func ("/tensor-file/pb-maps", test_pb_maps);
  g_test_add_func ("/tensor-file/npy-roundtrip", test_npy_roundtrip);
  g_test_add_func ("/tensor-file/npy-headers", test_npy_headers);
  g_test_add_func ("/tensor-file/load-file-detection", test_load_file_detection);
  int status = g_test_run ();
  remove_tree (tmp_dir);
  g_free (tmp_dir);
  return status;
}
