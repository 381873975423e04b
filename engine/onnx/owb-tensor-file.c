/* owb-tensor-file.c: tensor files: ONNX TensorProto .pb (also sequences and optionals of the
 * test-data layout) and NumPy .npy. */
#include <owb/owb-error.h>
#include <owb/owb-model-io.h>

#include <string.h>
#include <unistd.h>

#include "owb-onnx-private.h"

/* .pb files */

static void
set_name (char **name, const char *value)
{
  if (name)
    *name = g_strdup (value ? value : "");
}

static OwbTensor *
optional_new (OwbTensor *element)
{
  OwbTensor *optional = owb_tensor_new_sequence (element ? element->dtype : OWB_TYPE_UNDEFINED);
  /* There is no constructor for optionals: one is a sequence of zero or one element. */
  optional->kind = OWB_VALUE_OPTIONAL;
  if (element)
    g_ptr_array_add (optional->sequence, element);
  return optional;
}

/* A map's values are a SequenceProto of one-element tensors (what onnx.numpy_helper writes);
 * they become one 1-D tensor. Integer keys of any width become int64 keys. */
static OwbTensor *
map_from_proto (Onnx__MapProto *mp, GError **error)
{
  gboolean strings = mp->key_type == OWB_TYPE_STRING;
  switch (mp->key_type)
    {
    case OWB_TYPE_STRING: case OWB_TYPE_INT8: case OWB_TYPE_INT16: case OWB_TYPE_INT32: case OWB_TYPE_INT64:
    case OWB_TYPE_UINT8: case OWB_TYPE_UINT16: case OWB_TYPE_UINT32: case OWB_TYPE_UINT64:
      break;
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "map keys of type %d are not supported", mp->key_type);
      return NULL;
    }
  int64_t n = strings ? (int64_t) mp->n_string_keys : (int64_t) mp->n_keys;
  Onnx__SequenceProto *vp = mp->values;
  gsize nv = vp ? vp->n_tensor_values : 0;
  if ((vp && (vp->elem_type != ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR || vp->n_sequence_values || vp->n_map_values
              || vp->n_optional_values || vp->n_sparse_tensor_values))
      || (int64_t) nv != n)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "a map must have as many values as keys (%" G_GINT64_FORMAT "), each a one-element tensor", n);
      return NULL;
    }
  g_autoptr (OwbTensor) keys = owb_tensor_new (strings ? OWB_TYPE_STRING : OWB_TYPE_INT64, 1, &n, error);
  if (!keys)
    return NULL;
  for (int64_t i = 0; i < n; i++)
    if (strings)
      ((char **) keys->data)[i] = g_strndup ((const char *) mp->string_keys[i].data, mp->string_keys[i].len);
    else
      ((int64_t *) keys->data)[i] = mp->keys[i];
  OwbDataType dtype = n > 0 && vp->tensor_values[0]->has_data_type ? (OwbDataType) vp->tensor_values[0]->data_type
                                                                   : OWB_TYPE_FLOAT;
  g_autoptr (OwbTensor) values = owb_tensor_new (dtype, 1, &n, error);
  if (!values)
    return NULL;
  gsize elem = dtype == OWB_TYPE_STRING ? sizeof (char *) : owb_data_type_size (dtype);
  for (int64_t i = 0; i < n; i++)
    {
      g_autoptr (OwbTensor) v = _owb_onnx_tensor_from_proto (vp->tensor_values[i], TRUE, error);
      if (!v)
        {
          g_prefix_error (error, "map value %" G_GINT64_FORMAT ": ", i);
          return NULL;
        }
      if (v->kind != OWB_VALUE_TENSOR || v->dtype != dtype || v->nelems != 1 || elem == 0)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "map value %" G_GINT64_FORMAT " is not a one-element %s tensor", i, owb_data_type_name (dtype));
          return NULL;
        }
      if (dtype == OWB_TYPE_STRING)
        ((char **) values->data)[i] = g_strdup (((char **) v->data)[0] ? ((char **) v->data)[0] : "");
      else
        memcpy ((guint8 *) values->data + i * elem, v->data, elem);
    }
  return owb_tensor_new_map (g_steal_pointer (&keys), g_steal_pointer (&values));
}

static OwbTensor *
sequence_from_proto (Onnx__SequenceProto *sp, GError **error)
{
  if (sp->elem_type == ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP && !sp->n_tensor_values && !sp->n_sequence_values
      && !sp->n_optional_values && !sp->n_sparse_tensor_values)
    {
      g_autoptr (OwbTensor) maps = owb_tensor_new_sequence (OWB_TYPE_UNDEFINED);
      for (gsize i = 0; i < sp->n_map_values; i++)
        {
          OwbTensor *element = map_from_proto (sp->map_values[i], error);
          if (!element)
            {
              g_prefix_error (error, "sequence element %zu: ", i);
              return NULL;
            }
          maps->dtype = element->dtype;
          g_ptr_array_add (maps->sequence, element);
        }
      return g_steal_pointer (&maps);
    }
  if (sp->elem_type != ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR || sp->n_sequence_values || sp->n_map_values
      || sp->n_optional_values || sp->n_sparse_tensor_values)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "sequence .pb files are not supported yet, except sequences of tensors or maps");
      return NULL;
    }
  OwbDataType dtype = OWB_TYPE_UNDEFINED;
  if (sp->n_tensor_values && sp->tensor_values[0]->has_data_type)
    dtype = sp->tensor_values[0]->data_type;
  g_autoptr (OwbTensor) sequence = owb_tensor_new_sequence (dtype);
  for (gsize i = 0; i < sp->n_tensor_values; i++)
    {
      OwbTensor *element = _owb_onnx_tensor_from_proto (sp->tensor_values[i], TRUE, error);
      if (!element)
        {
          g_prefix_error (error, "sequence element %zu: ", i);
          return NULL;
        }
      g_ptr_array_add (sequence->sequence, element);
    }
  return g_steal_pointer (&sequence);
}

static OwbTensor *
optional_from_proto (Onnx__OptionalProto *op, GError **error)
{
  switch (op->elem_type)
    {
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED:
      return optional_new (NULL);
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__TENSOR:
      {
        if (!op->tensor_value)
          return optional_new (NULL);
        OwbTensor *element = _owb_onnx_tensor_from_proto (op->tensor_value, TRUE, error);
        return element ? optional_new (element) : NULL;
      }
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__SEQUENCE:
      {
        if (!op->sequence_value)
          return optional_new (NULL);
        OwbTensor *element = sequence_from_proto (op->sequence_value, error);
        return element ? optional_new (element) : NULL;
      }
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "optional .pb files holding a map, a sparse tensor or an optional are not supported yet");
      return NULL;
    }
}

static OwbTensor *
load_map (const guint8 *data, gsize size, char **name, GError **error)
{
  const char *reason = NULL;
  if (!_owb_onnx_check_wire (&onnx__map_proto__descriptor, data, size, &reason))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a map .pb file: %s", reason);
      return NULL;
    }
  Onnx__MapProto *mp = onnx__map_proto__unpack (_owb_onnx_allocator (), size, data);
  if (!mp || !mp->has_key_type)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a MapProto .pb file");
      if (mp)
        onnx__map_proto__free_unpacked (mp, _owb_onnx_allocator ());
      return NULL;
    }
  OwbTensor *result = map_from_proto (mp, error);
  if (result)
    set_name (name, mp->name);
  onnx__map_proto__free_unpacked (mp, _owb_onnx_allocator ());
  return result;
}

/* A .pb file holds a TensorProto, a SequenceProto or an OptionalProto with no marker saying
 * which. A TensorProto is tried first; the other two share their first fields, so the choice
 * between them follows what the ONNX test data contains: an optional when the element is
 * missing or is itself a sequence, a sequence of tensors otherwise. */
static OwbTensor *
load_container (const guint8 *data, gsize size, char **name, GError **error)
{
  const char *reason = NULL;
  Onnx__SequenceProto *sp = NULL;
  if (_owb_onnx_check_wire (&onnx__sequence_proto__descriptor, data, size, &reason))
    sp = onnx__sequence_proto__unpack (_owb_onnx_allocator (), size, data);
  if (!sp)
    {
      /* Packed int64 keys do not parse as a SequenceProto: the data may still be a map. */
      OwbTensor *map = load_map (data, size, name, NULL);
      return map;
    }
  OwbTensor *result = NULL;
  if (sp->has_elem_type && sp->elem_type > ONNX__SEQUENCE_PROTO__DATA_TYPE__OPTIONAL)
    {
      /* MapProto's key_type shares field 2 with elem_type, and key types are all above 5. */
      result = load_map (data, size, name, error);
    }
  else if (sp->has_elem_type && sp->base.n_unknown_fields == 0)
    {
      gboolean optional = sp->elem_type == ONNX__SEQUENCE_PROTO__DATA_TYPE__UNDEFINED
                          || (sp->elem_type == ONNX__SEQUENCE_PROTO__DATA_TYPE__SEQUENCE && sp->n_sequence_values <= 1);
      if (optional)
        {
          Onnx__OptionalProto *op = onnx__optional_proto__unpack (_owb_onnx_allocator (), size, data);
          if (op)
            {
              result = optional_from_proto (op, error);
              set_name (name, op->name);
              onnx__optional_proto__free_unpacked (op, _owb_onnx_allocator ());
            }
        }
      else
        {
          result = sequence_from_proto (sp, error);
          set_name (name, sp->name);
        }
      if (!result && error && *error == NULL)
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "malformed sequence or optional .pb data");
    }
  onnx__sequence_proto__free_unpacked (sp, _owb_onnx_allocator ());
  return result;
}

OwbTensor *
owb_tensor_load_pb_data (const void *data, gsize size, char **name, GError **error)
{
  const char *reason = NULL;
  if (name)
    *name = NULL;
  if (data == NULL || size == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a tensor .pb file: the data is empty");
      return NULL;
    }
  if (!_owb_onnx_check_wire (&onnx__tensor_proto__descriptor, data, size, &reason))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a tensor .pb file: %s", reason);
      return NULL;
    }
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack (_owb_onnx_allocator (), size, data);
  GError *tensor_error = NULL;
  OwbTensor *tensor = NULL;
  if (tp)
    {
      tensor = _owb_onnx_tensor_from_proto (tp, TRUE, &tensor_error);
      if (tensor)
        set_name (name, tp->name);
      onnx__tensor_proto__free_unpacked (tp, _owb_onnx_allocator ());
    }
  if (tensor)
    return tensor;

  GError *container_error = NULL;
  tensor = load_container (data, size, name, &container_error);
  if (tensor)
    {
      g_clear_error (&tensor_error);
      return tensor;
    }
  /* A clean SequenceProto/OptionalProto parse (no unknown fields: a real TensorProto nearly
   * always has a name or raw_data, unknown to those) makes the container's error the relevant one. */
  if (container_error)
    {
      g_propagate_error (error, container_error);
      g_clear_error (&tensor_error);
    }
  else if (tensor_error)
    {
      g_propagate_error (error, tensor_error);
      g_clear_error (&container_error);
    }
  else
    g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a tensor .pb file: malformed protobuf data");
  return NULL;
}

OwbTensor *
_owb_tensor_load_pb_data_for_kind (const void *data, gsize size, OwbValueKind kind, char **name, GError **error)
{
  const char *reason = NULL;
  if (kind == OWB_VALUE_MAP)
    {
      if (name)
        *name = NULL;
      if (data == NULL || size == 0)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a map .pb file: the data is empty");
          return NULL;
        }
      return load_map (data, size, name, error);
    }
  if (kind != OWB_VALUE_SEQUENCE && kind != OWB_VALUE_OPTIONAL)
    return owb_tensor_load_pb_data (data, size, name, error);
  if (name)
    *name = NULL;
  if (data == NULL || size == 0 || !_owb_onnx_check_wire (&onnx__sequence_proto__descriptor, data, size, &reason))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a %s .pb file: %s",
                   kind == OWB_VALUE_SEQUENCE ? "sequence" : "optional", reason ? reason : "the data is empty");
      return NULL;
    }
  OwbTensor *result = NULL;
  if (kind == OWB_VALUE_SEQUENCE)
    {
      Onnx__SequenceProto *sp = onnx__sequence_proto__unpack (_owb_onnx_allocator (), size, data);
      if (sp && sp->has_elem_type)
        {
          result = sequence_from_proto (sp, error);
          if (result)
            set_name (name, sp->name);
        }
      else
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not a SequenceProto .pb file");
      if (sp)
        onnx__sequence_proto__free_unpacked (sp, _owb_onnx_allocator ());
      return result;
    }
  Onnx__OptionalProto *op = onnx__optional_proto__unpack (_owb_onnx_allocator (), size, data);
  if (op && op->has_elem_type && op->base.n_unknown_fields == 0)
    {
      result = optional_from_proto (op, error);
      if (result)
        set_name (name, op->name);
    }
  if (op)
    onnx__optional_proto__free_unpacked (op, _owb_onnx_allocator ());
  if (result || (error && *error))
    return result;
  /* A plain tensor file fed to an optional input: the optional holds it. */
  OwbTensor *element = owb_tensor_load_pb_data (data, size, name, error);
  return element ? optional_new (element) : NULL;
}

/* .npy files */

typedef struct {
  const char *p, *end;
} Cursor;

static void
skip_space (Cursor *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static gboolean
accept (Cursor *c, char ch)
{
  skip_space (c);
  if (c->p < c->end && *c->p == ch)
    {
      c->p++;
      return TRUE;
    }
  return FALSE;
}

/* A Python string literal without escapes ('...' or "..."); returns a copy. */
static char *
parse_string (Cursor *c)
{
  skip_space (c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return NULL;
  char quote = *c->p++;
  const char *start = c->p;
  while (c->p < c->end && *c->p != quote)
    {
      if (*c->p == '\\')
        return NULL;
      c->p++;
    }
  if (c->p >= c->end)
    return NULL;
  return g_strndup (start, c->p++ - start);
}

static gboolean
parse_word (Cursor *c, const char *word)
{
  skip_space (c);
  gsize len = strlen (word);
  if ((gsize) (c->end - c->p) >= len && strncmp (c->p, word, len) == 0)
    {
      c->p += len;
      return TRUE;
    }
  return FALSE;
}

static gboolean
parse_shape (Cursor *c, int *rank, int64_t *dims)
{
  *rank = 0;
  if (!accept (c, '('))
    return FALSE;
  for (;;)
    {
      if (accept (c, ')'))
        return TRUE;
      skip_space (c);
      if (c->p >= c->end || !g_ascii_isdigit (*c->p))
        return FALSE;
      int64_t v = 0;
      while (c->p < c->end && g_ascii_isdigit (*c->p))
        {
          int digit = *c->p++ - '0';
          if (v > (G_MAXINT64 - digit) / 10)
            return FALSE;
          v = v * 10 + digit;
        }
      /* numpy writes Python ints; an "L" suffix comes from Python 2. */
      if (c->p < c->end && *c->p == 'L')
        c->p++;
      if (*rank >= OWB_MAX_RANK)
        return FALSE;
      dims[(*rank)++] = v;
      if (accept (c, ','))
        continue;
      skip_space (c);
      if (c->p >= c->end || *c->p != ')')
        return FALSE;
    }
}

static const struct {
  char kind;
  int size;
  OwbDataType dtype;
} npy_types[] = {
  { 'f', 2, OWB_TYPE_FLOAT16 }, { 'f', 4, OWB_TYPE_FLOAT },   { 'f', 8, OWB_TYPE_DOUBLE },
  { 'i', 1, OWB_TYPE_INT8 },    { 'i', 2, OWB_TYPE_INT16 },   { 'i', 4, OWB_TYPE_INT32 },
  { 'i', 8, OWB_TYPE_INT64 },   { 'u', 1, OWB_TYPE_UINT8 },   { 'u', 2, OWB_TYPE_UINT16 },
  { 'u', 4, OWB_TYPE_UINT32 },  { 'u', 8, OWB_TYPE_UINT64 },  { 'b', 1, OWB_TYPE_BOOL },
  { 'c', 8, OWB_TYPE_COMPLEX64 }, { 'c', 16, OWB_TYPE_COMPLEX128 },
};

static gboolean
npy_dtype (const char *descr, OwbDataType *dtype, gboolean *swap)
{
  if (strlen (descr) < 3 || strchr ("<>|=", descr[0]) == NULL)
    return FALSE;
  char *end = NULL;
  long size = strtol (descr + 2, &end, 10);
  if (*end != '\0')
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (npy_types); i++)
    if (npy_types[i].kind == descr[1] && npy_types[i].size == size)
      {
        /* '|' (no byte order) is only meaningful for one-byte types. */
        if (descr[0] == '|' && size != 1)
          return FALSE;
        *dtype = npy_types[i].dtype;
        gboolean file_big = descr[0] == '>' || (descr[0] == '=' && G_BYTE_ORDER == G_BIG_ENDIAN);
        *swap = size > 1 && file_big != (G_BYTE_ORDER == G_BIG_ENDIAN);
        return TRUE;
      }
  return FALSE;
}

#define NPY_MAGIC "\x93NUMPY"

OwbTensor *
owb_tensor_load_npy_data (const void *data, gsize size, GError **error)
{
  const guint8 *bytes = data;
  /* Before any goto: the cleanup of descr must never see it uninitialised. */
  g_autofree char *descr = NULL;
  if (size < 10 || memcmp (bytes, NPY_MAGIC, 6) != 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "not an .npy file: the magic string is missing");
      return NULL;
    }
  int major = bytes[6], minor = bytes[7];
  gsize header_start, header_len;
  if (major == 1)
    {
      header_start = 10;
      header_len = bytes[8] | (bytes[9] << 8);
    }
  else if (major == 2 || major == 3)
    {
      if (size < 12)
        goto truncated;
      header_start = 12;
      header_len = (gsize) bytes[8] | ((gsize) bytes[9] << 8) | ((gsize) bytes[10] << 16) | ((gsize) bytes[11] << 24);
    }
  else
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "unsupported .npy format version %d.%d", major,
                   minor);
      return NULL;
    }
  if (header_len > size - header_start)
    goto truncated;

  Cursor c = { (const char *) bytes + header_start, (const char *) bytes + header_start + header_len };
  gboolean fortran = FALSE, have_fortran = FALSE, have_shape = FALSE;
  int rank = 0;
  int64_t dims[OWB_MAX_RANK];
  if (!accept (&c, '{'))
    goto bad_header;
  while (!accept (&c, '}'))
    {
      g_autofree char *key = parse_string (&c);
      if (!key || !accept (&c, ':'))
        goto bad_header;
      if (strcmp (key, "descr") == 0)
        {
          g_free (descr);
          if (!(descr = parse_string (&c)))
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE,
                           ".npy file: structured or unusual dtypes are not supported");
              return NULL;
            }
        }
      else if (strcmp (key, "fortran_order") == 0)
        {
          if (parse_word (&c, "True"))
            fortran = TRUE;
          else if (parse_word (&c, "False"))
            fortran = FALSE;
          else
            goto bad_header;
          have_fortran = TRUE;
        }
      else if (strcmp (key, "shape") == 0)
        {
          if (!parse_shape (&c, &rank, dims))
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                           ".npy file: the shape is malformed or has more than %d dimensions", OWB_MAX_RANK);
              return NULL;
            }
          have_shape = TRUE;
        }
      else
        goto bad_header;
      if (!accept (&c, ','))
        {
          if (!accept (&c, '}'))
            goto bad_header;
          break;
        }
    }
  if (!descr || !have_fortran || !have_shape)
    goto bad_header;
  if (fortran)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   ".npy file is in Fortran (column-major) order, which is not supported; save it in C order");
      return NULL;
    }
  OwbDataType dtype;
  gboolean swap;
  if (!npy_dtype (descr, &dtype, &swap))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, ".npy file: dtype '%s' is not supported", descr);
      return NULL;
    }
  int64_t count;
  if (!owb_shape_count (rank, dims, &count, ".npy file", error))
    return NULL;
  gsize elem = owb_data_type_size (dtype);
  gsize available = size - header_start - header_len;
  if ((guint64) count > G_MAXSIZE / elem || (gsize) count * elem != available)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   ".npy file has %" G_GSIZE_FORMAT " bytes of data, but its shape and dtype '%s' need %"
                   G_GINT64_FORMAT " elements of %" G_GSIZE_FORMAT " bytes", available, descr, count, elem);
      return NULL;
    }
  OwbTensor *tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
  if (!tensor)
    return NULL;
  if (available)
    memcpy (tensor->data, bytes + header_start + header_len, available);
  if (swap)
    {
      gsize part = dtype == OWB_TYPE_COMPLEX64 || dtype == OWB_TYPE_COMPLEX128 ? elem / 2 : elem;
      guint8 *b = tensor->data;
      for (gsize i = 0; i + part <= available; i += part)
        for (gsize k = 0; k < part / 2; k++)
          {
            guint8 t = b[i + k];
            b[i + k] = b[i + part - 1 - k];
            b[i + part - 1 - k] = t;
          }
    }
  if (dtype == OWB_TYPE_BOOL)
    {
      guint8 *b = tensor->data;
      for (int64_t i = 0; i < count; i++)
        b[i] = b[i] != 0;
    }
  return tensor;

truncated:
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, ".npy file is truncated (the header is incomplete)");
  return NULL;
bad_header:
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
               ".npy file: malformed header (expected a dict with 'descr', 'fortran_order' and 'shape')");
  return NULL;
}

/* Files */

static gboolean
is_npy_path (const char *path)
{
  gsize len = strlen (path);
  return len >= 4 && g_ascii_strcasecmp (path + len - 4, ".npy") == 0;
}

OwbTensor *
owb_tensor_load_file (const char *path, char **name, GError **error)
{
  if (name)
    *name = NULL;
  /* Read, not mapped (a file that shrinks gives an error, not SIGBUS); regular files only. */
  struct stat st;
  int fd = _owb_open_regular_file (path, "tensor file", &st, error);
  if (fd < 0)
    return NULL;
  gsize size = (gsize) MAX (st.st_size, 0);
  guint8 *buffer = g_try_malloc (MAX (size, 1));
  if (!buffer)
    {
      close (fd);
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "cannot allocate %" G_GSIZE_FORMAT " bytes to read '%s'", size,
                   path);
      return NULL;
    }
  gboolean read_ok = _owb_pread_exact (fd, buffer, size, 0, "tensor file", path, error);
  close (fd);
  if (!read_ok)
    {
      g_free (buffer);
      return NULL;
    }
  const guint8 *data = buffer;
  OwbTensor *tensor;
  if (is_npy_path (path) || (size >= 6 && memcmp (data, NPY_MAGIC, 6) == 0))
    {
      tensor = owb_tensor_load_npy_data (data, size, error);
      if (tensor)
        set_name (name, "");
    }
  else
    tensor = owb_tensor_load_pb_data (data, size, name, error);
  g_free (buffer);
  if (!tensor)
    g_prefix_error (error, "%s: ", path);
  return tensor;
}

/* Writing */

/* Values as one-element tensors, as onnx.numpy_helper.from_dict writes them; the data is
 * referenced, so the map must outlive the packing. */
static Onnx__MapProto *
map_proto (OwbProtoArena *arena, const OwbTensor *map, const char *name, GError **error)
{
  const OwbTensor *keys = map->sequence && map->sequence->len == 2 ? g_ptr_array_index (map->sequence, 0) : NULL;
  const OwbTensor *values = keys ? g_ptr_array_index (map->sequence, 1) : NULL;
  if (!keys || keys->nelems != values->nelems || (keys->dtype != OWB_TYPE_INT64 && keys->dtype != OWB_TYPE_STRING)
      || values->dtype == OWB_TYPE_STRING || owb_data_type_size (values->dtype) == 0
      || owb_data_type_packed_bits (values->dtype) != 0 || G_BYTE_ORDER != G_LITTLE_ENDIAN)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "this map cannot be saved as .pb");
      return NULL;
    }
  gsize n = keys->nelems, elem = owb_data_type_size (values->dtype);
  Onnx__MapProto *mp = _owb_proto_arena_alloc (arena, sizeof *mp);
  onnx__map_proto__init (mp);
  mp->name = name && name[0] ? (char *) name : NULL;
  mp->has_key_type = TRUE;
  mp->key_type = keys->dtype;
  if (keys->dtype == OWB_TYPE_STRING)
    {
      mp->n_string_keys = n;
      mp->string_keys = _owb_proto_arena_alloc (arena, sizeof (ProtobufCBinaryData) * MAX (n, 1));
      for (gsize i = 0; i < n; i++)
        {
          const char *k = ((char **) keys->data)[i] ? ((char **) keys->data)[i] : "";
          mp->string_keys[i].data = (guint8 *) k;
          mp->string_keys[i].len = strlen (k);
        }
    }
  else
    {
      mp->n_keys = n;
      mp->keys = keys->data;
    }
  Onnx__SequenceProto *vp = _owb_proto_arena_alloc (arena, sizeof *vp);
  onnx__sequence_proto__init (vp);
  vp->has_elem_type = TRUE;
  vp->elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
  vp->n_tensor_values = n;
  vp->tensor_values = _owb_proto_arena_alloc (arena, sizeof (Onnx__TensorProto *) * MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      Onnx__TensorProto *tp = _owb_proto_arena_alloc (arena, sizeof *tp);
      onnx__tensor_proto__init (tp);
      tp->has_data_type = TRUE;
      tp->data_type = values->dtype;
      tp->has_raw_data = TRUE;
      tp->raw_data.data = (guint8 *) values->data + i * elem;
      tp->raw_data.len = elem;
      vp->tensor_values[i] = tp;
    }
  mp->values = vp;
  return mp;
}

static ProtobufCMessage *
value_proto (OwbProtoArena *arena, const OwbTensor *value, const char *name, GError **error)
{
  if (value->kind == OWB_VALUE_MAP)
    {
      Onnx__MapProto *mp = map_proto (arena, value, name, error);
      return mp ? &mp->base : NULL;
    }
  if (value->kind == OWB_VALUE_TENSOR)
    {
      Onnx__TensorProto *tp = _owb_proto_arena_alloc (arena, sizeof *tp);
      onnx__tensor_proto__init (tp);
      return _owb_onnx_tensor_to_proto (arena, value, name, tp, error) ? &tp->base : NULL;
    }
  if (value->kind == OWB_VALUE_SEQUENCE)
    {
      Onnx__SequenceProto *sp = _owb_proto_arena_alloc (arena, sizeof *sp);
      onnx__sequence_proto__init (sp);
      sp->name = name && name[0] ? (char *) name : NULL;
      sp->has_elem_type = TRUE;
      sp->elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
      guint n = value->sequence ? value->sequence->len : 0;
      if (n > 0 && ((const OwbTensor *) g_ptr_array_index (value->sequence, 0))->kind == OWB_VALUE_MAP)
        {
          sp->elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP;
          sp->n_map_values = n;
          sp->map_values = _owb_proto_arena_alloc (arena, sizeof (Onnx__MapProto *) * n);
          for (guint i = 0; i < n; i++)
            {
              const OwbTensor *element = g_ptr_array_index (value->sequence, i);
              if (element->kind != OWB_VALUE_MAP)
                {
                  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "a sequence mixes maps and other values");
                  return NULL;
                }
              if (!(sp->map_values[i] = map_proto (arena, element, NULL, error)))
                return NULL;
            }
          return &sp->base;
        }
      sp->n_tensor_values = n;
      sp->tensor_values = _owb_proto_arena_alloc (arena, sizeof (Onnx__TensorProto *) * n);
      for (guint i = 0; i < n; i++)
        {
          const OwbTensor *element = g_ptr_array_index (value->sequence, i);
          if (element->kind != OWB_VALUE_TENSOR)
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                           "sequences of non-tensors cannot be saved as .pb yet");
              return NULL;
            }
          sp->tensor_values[i] = _owb_proto_arena_alloc (arena, sizeof (Onnx__TensorProto));
          onnx__tensor_proto__init (sp->tensor_values[i]);
          if (!_owb_onnx_tensor_to_proto (arena, element, NULL, sp->tensor_values[i], error))
            return NULL;
        }
      return &sp->base;
    }
  if (value->kind == OWB_VALUE_OPTIONAL)
    {
      Onnx__OptionalProto *op = _owb_proto_arena_alloc (arena, sizeof *op);
      onnx__optional_proto__init (op);
      op->name = name && name[0] ? (char *) name : NULL;
      op->has_elem_type = TRUE;
      op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED;
      if (value->sequence && value->sequence->len > 0)
        {
          const OwbTensor *element = g_ptr_array_index (value->sequence, 0);
          ProtobufCMessage *inner = value_proto (arena, element, NULL, error);
          if (!inner)
            return NULL;
          if (element->kind == OWB_VALUE_TENSOR)
            {
              op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__TENSOR;
              op->tensor_value = (Onnx__TensorProto *) inner;
            }
          else if (element->kind == OWB_VALUE_SEQUENCE)
            {
              op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__SEQUENCE;
              op->sequence_value = (Onnx__SequenceProto *) inner;
            }
          else
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "this optional value cannot be saved as .pb");
              return NULL;
            }
        }
      return &op->base;
    }
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "this kind of value cannot be saved as .pb");
  return NULL;
}

gboolean
owb_tensor_save_pb_file (const OwbTensor *tensor, const char *name, const char *path, GError **error)
{
  OwbProtoArena arena = { g_ptr_array_new_with_free_func (g_free) };
  OwbAtomicFile file = { 0 };
  gboolean ok = FALSE;
  ProtobufCMessage *message = value_proto (&arena, tensor, name, error);
  if (message && _owb_atomic_file_open (&file, path, error))
    {
      _owb_atomic_file_write_message (&file, message);
      ok = _owb_atomic_file_commit (&file, error);
    }
  _owb_atomic_file_abort (&file);
  g_ptr_array_unref (arena.blocks);
  if (!ok)
    g_prefix_error (error, "%s: ", path);
  return ok;
}

static const char *
npy_descr (OwbDataType dtype)
{
  switch (dtype)
    {
    case OWB_TYPE_FLOAT16:
      return "<f2";
    case OWB_TYPE_FLOAT:
      return "<f4";
    case OWB_TYPE_DOUBLE:
      return "<f8";
    case OWB_TYPE_INT8:
      return "|i1";
    case OWB_TYPE_INT16:
      return "<i2";
    case OWB_TYPE_INT32:
      return "<i4";
    case OWB_TYPE_INT64:
      return "<i8";
    case OWB_TYPE_UINT8:
      return "|u1";
    case OWB_TYPE_UINT16:
      return "<u2";
    case OWB_TYPE_UINT32:
      return "<u4";
    case OWB_TYPE_UINT64:
      return "<u8";
    case OWB_TYPE_BOOL:
      return "|b1";
    case OWB_TYPE_COMPLEX64:
      return "<c8";
    case OWB_TYPE_COMPLEX128:
      return "<c16";
    default:
      return NULL;
    }
}

gboolean
owb_tensor_save_npy_file (const OwbTensor *tensor, const char *path, GError **error)
{
  const char *descr = tensor->kind == OWB_VALUE_TENSOR ? npy_descr (tensor->dtype) : NULL;
  if (descr == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "%s: a %s %s cannot be saved as .npy", path,
                   owb_data_type_name (tensor->dtype), tensor->kind == OWB_VALUE_TENSOR ? "tensor" : "value");
      return FALSE;
    }
  GString *header = g_string_new (NULL);
  g_string_append_printf (header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < tensor->rank; i++)
    g_string_append_printf (header, "%" G_GINT64_FORMAT "%s", tensor->dims[i],
                            tensor->rank == 1 ? "," : (i + 1 < tensor->rank ? ", " : ""));
  g_string_append (header, "), }");
  /* numpy pads the header with spaces and a newline so that the data starts 64-byte aligned. */
  gsize prefix = header->len + 1 + 10 > 65535 ? 12 : 10;
  while ((prefix + header->len + 1) % 64 != 0)
    g_string_append_c (header, ' ');
  g_string_append_c (header, '\n');

  guint8 preamble[12];
  memcpy (preamble, NPY_MAGIC, 6);
  preamble[6] = prefix == 10 ? 1 : 2;
  preamble[7] = 0;
  preamble[8] = header->len & 0xff;
  preamble[9] = (header->len >> 8) & 0xff;
  preamble[10] = (header->len >> 16) & 0xff;
  preamble[11] = (header->len >> 24) & 0xff;

  gsize nbytes = (gsize) tensor->nelems * owb_data_type_size (tensor->dtype);
  OwbAtomicFile file = { 0 };
  gboolean ok = FALSE;
  if (_owb_atomic_file_open (&file, path, error))
    {
      fwrite (preamble, 1, prefix, file.file);
      fwrite (header->str, 1, header->len, file.file);
#if G_BYTE_ORDER == G_BIG_ENDIAN
      gsize part = tensor->dtype == OWB_TYPE_COMPLEX64 || tensor->dtype == OWB_TYPE_COMPLEX128
                       ? owb_data_type_size (tensor->dtype) / 2
                       : owb_data_type_size (tensor->dtype);
      const guint8 *b = tensor->data;
      for (gsize i = 0; i + part <= nbytes; i += part)
        for (gsize k = 0; k < part; k++)
          fputc (b[i + part - 1 - k], file.file);
#else
      if (nbytes)
        fwrite (tensor->data, 1, nbytes, file.file);
#endif
      ok = _owb_atomic_file_commit (&file, error);
    }
  _owb_atomic_file_abort (&file);
  g_string_free (header, TRUE);
  if (!ok)
    g_prefix_error (error, "%s: ", path);
  return ok;
}
