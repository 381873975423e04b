/* owb-tensor.h: a reference-counted, dense, row-major tensor, in host memory unless `device` says
 * otherwise (owb-device.h). */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-types.h>

G_BEGIN_DECLS

/* Fields are public for reading by kernels; create and change them only through the
 * functions below.
 *
 * Storage: `data` holds nelems elements of owb_data_type_size (dtype) bytes, row-major,
 * except for OWB_TYPE_STRING, where `data` is an array of nelems `char *` (NUL-terminated,
 * owned by the tensor). A tensor with 0 elements may have data == NULL.
 *
 * Kind: most values are tensors. A sequence value (kind OWB_VALUE_SEQUENCE) keeps its
 * elements in `sequence` (OwbTensor *, owned); an optional (kind OWB_VALUE_OPTIONAL) keeps
 * its element, or none, as sequence->len 1 or 0. A map (kind OWB_VALUE_MAP, dtype = the
 * value type) keeps exactly two tensors in `sequence`: [0] the keys (1-D, int64 or string)
 * and [1] the values (1-D, same length); entry i maps keys[i] to values[i]. */
typedef struct _OwbTensor OwbTensor;
typedef struct _OwbDevice OwbDevice; /* owb-device.h */
struct _OwbTensor {
  /*< public, read-only >*/
  OwbValueKind kind;
  OwbDataType dtype;
  int rank;
  int64_t dims[OWB_MAX_RANK];
  int64_t nelems;
  gsize nbytes;
  void *data;
  GPtrArray *sequence;
  OwbDevice *device; /* NULL: data is host memory; else memory of that device (owb-device.h) */
  /*< private >*/
  int ref_count;
  GDestroyNotify free_func;
  gpointer free_data;
};

/* A new tensor with zero-filled storage. NULL with an error for bad shapes (negative, overflow)
 * or sizes beyond what can be allocated. */
OWB_API OwbTensor *owb_tensor_new (OwbDataType dtype, int rank, const int64_t *dims, GError **error);
/* Same, but storage is left uninitialised (for outputs a kernel overwrites whole). */
OWB_API OwbTensor *owb_tensor_new_uninit (OwbDataType dtype, int rank, const int64_t *dims, GError **error);
/* Wraps memory the caller keeps alive until free_func (free_data) is called (may be NULL). */
OWB_API OwbTensor *owb_tensor_new_wrap (OwbDataType dtype, int rank, const int64_t *dims, void *data,
                                        GDestroyNotify free_func, gpointer free_data, GError **error);
/* Scalar helpers (rank 0). */
OWB_API OwbTensor *owb_tensor_new_scalar_float (float v);
OWB_API OwbTensor *owb_tensor_new_scalar_int64 (int64_t v);
OWB_API OwbTensor *owb_tensor_new_sequence (OwbDataType elem_dtype);
/* A map from 1-D keys (int64 or string) to 1-D values of the same length; takes both
 * references. Callers check the shapes: other ones give NULL (the references are dropped). */
OWB_API OwbTensor *owb_tensor_new_map (OwbTensor *keys, OwbTensor *values);

OWB_API OwbTensor *owb_tensor_ref (OwbTensor *tensor);
OWB_API void owb_tensor_unref (OwbTensor *tensor);
/* A deep copy. */
OWB_API OwbTensor *owb_tensor_dup (const OwbTensor *tensor);
/* Same storage read as another shape with the same element count; shares the data
 * (the result holds a reference on `tensor`). */
OWB_API OwbTensor *owb_tensor_new_view (OwbTensor *tensor, int rank, const int64_t *dims, GError **error);

/* A tensor of random values: floating types uniform in [-1, 1), integers in [0, 10) (small enough
 * to be valid indices and sizes in most graphs), bools 0 or 1, strings "s0".."s9". One generator
 * for every caller, so that a seed gives the same values in the CLI, the app and the quantizer.
 * NULL with OWB_ERROR_INVALID_ARGUMENT for other types (complex). */
OWB_API OwbTensor *owb_tensor_new_random (OwbDataType dtype, int rank, const int64_t *dims, GRand *rand, GError **error);

/* Reads element i converted to double / int64 (any numeric or bool type). */
OWB_API double owb_tensor_get_double (const OwbTensor *tensor, int64_t i);
OWB_API int64_t owb_tensor_get_int64 (const OwbTensor *tensor, int64_t i);
/* Writes element i from a double (numeric/bool types; integers are truncated toward zero). */
OWB_API void owb_tensor_set_double (OwbTensor *tensor, int64_t i, double v);

/* The value type of a tensor, as inference sees it. */
OWB_API void owb_tensor_get_value_type (const OwbTensor *tensor, OwbValueType *type);
OWB_API gboolean owb_tensor_same_shape (const OwbTensor *a, const OwbTensor *b);
OWB_API char *owb_tensor_shape_to_string (const OwbTensor *tensor);

/* IEEE half and bfloat16 conversions (round to nearest even). */
OWB_API float owb_half_to_float (uint16_t h);
OWB_API uint16_t owb_float_to_half (float f);
OWB_API float owb_bfloat16_to_float (uint16_t b);
OWB_API uint16_t owb_float_to_bfloat16 (float f);

/* Converts a tensor to another element type (numeric, bool; float16/bfloat16 included),
 * as ONNX Cast does without saturation. */
OWB_API OwbTensor *owb_tensor_cast (const OwbTensor *tensor, OwbDataType to, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbTensor, owb_tensor_unref)

G_END_DECLS
