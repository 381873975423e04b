/* owb-types.h: element types (numbered as ONNX's TensorProto.DataType) and symbolic shapes. */
#pragma once

#include <owb/owb-api.h>
#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The largest tensor rank the engine accepts; models with more are refused with an error. */
#define OWB_MAX_RANK 16

typedef enum {
  OWB_TYPE_UNDEFINED = 0,
  OWB_TYPE_FLOAT = 1,
  OWB_TYPE_UINT8 = 2,
  OWB_TYPE_INT8 = 3,
  OWB_TYPE_UINT16 = 4,
  OWB_TYPE_INT16 = 5,
  OWB_TYPE_INT32 = 6,
  OWB_TYPE_INT64 = 7,
  OWB_TYPE_STRING = 8,
  OWB_TYPE_BOOL = 9,
  OWB_TYPE_FLOAT16 = 10,
  OWB_TYPE_DOUBLE = 11,
  OWB_TYPE_UINT32 = 12,
  OWB_TYPE_UINT64 = 13,
  OWB_TYPE_COMPLEX64 = 14,
  OWB_TYPE_COMPLEX128 = 15,
  OWB_TYPE_BFLOAT16 = 16,
  OWB_TYPE_FLOAT8E4M3FN = 17,
  OWB_TYPE_FLOAT8E4M3FNUZ = 18,
  OWB_TYPE_FLOAT8E5M2 = 19,
  OWB_TYPE_FLOAT8E5M2FNUZ = 20,
  OWB_TYPE_UINT4 = 21,
  OWB_TYPE_INT4 = 22,
  OWB_TYPE_FLOAT4E2M1 = 23,
  OWB_TYPE_FLOAT8E8M0 = 24,
  OWB_TYPE_UINT2 = 25,
  OWB_TYPE_INT2 = 26,
  OWB_TYPE_FLOAT6E2M3 = 27,
  OWB_TYPE_FLOAT6E3M2 = 28,
  OWB_TYPE_LAST_
} OwbDataType;

/* Bit for a type in a mask of accepted types (kernel rows, type constraints). */
#define OWB_TYPE_BIT(t) (G_GUINT64_CONSTANT (1) << (t))
#define OWB_TYPES_FLOAT (OWB_TYPE_BIT (OWB_TYPE_FLOAT) | OWB_TYPE_BIT (OWB_TYPE_DOUBLE) | OWB_TYPE_BIT (OWB_TYPE_FLOAT16))
#define OWB_TYPES_SIGNED_INT (OWB_TYPE_BIT (OWB_TYPE_INT8) | OWB_TYPE_BIT (OWB_TYPE_INT16) | OWB_TYPE_BIT (OWB_TYPE_INT32) | OWB_TYPE_BIT (OWB_TYPE_INT64))
#define OWB_TYPES_UNSIGNED_INT (OWB_TYPE_BIT (OWB_TYPE_UINT8) | OWB_TYPE_BIT (OWB_TYPE_UINT16) | OWB_TYPE_BIT (OWB_TYPE_UINT32) | OWB_TYPE_BIT (OWB_TYPE_UINT64))
#define OWB_TYPES_INT (OWB_TYPES_SIGNED_INT | OWB_TYPES_UNSIGNED_INT)
#define OWB_TYPES_NUMERIC (OWB_TYPES_FLOAT | OWB_TYPES_INT)
#define OWB_TYPES_ALL (OWB_TYPES_NUMERIC | OWB_TYPE_BIT (OWB_TYPE_BOOL) | OWB_TYPE_BIT (OWB_TYPE_STRING))

/* Bytes per element; 0 for strings (stored as char * per element, see OwbTensor) and
 * for undefined/sub-byte types. Sub-byte types (int4, uint4, float4e2m1, int2, uint2, float6*)
 * are packed in files but held unpacked in memory, one element per byte. */
OWB_API gsize owb_data_type_size (OwbDataType type);
/* Bits per element of the sub-byte types as packed in files (4 for int4, uint4, float4e2m1; 2 for
 * int2, uint2; 6 for the float6 types); 0 for every other type. */
OWB_API int owb_data_type_packed_bits (OwbDataType type);
/* The ONNX spelling: "float", "int64", "float16"...; "undefined" for unknown values. */
OWB_API const char *owb_data_type_name (OwbDataType type);
OWB_API gboolean owb_data_type_is_valid (int type);

/* A dimension of a shape being inferred: a known value (>= 0), a named symbolic
 * dimension ("batch"), or unknown (value < 0 and param NULL). `param` points to a string
 * interned with g_intern_string, so it can be compared by pointer and never freed. */
typedef struct {
  int64_t value;
  const char *param;
} OwbDim;

#define OWB_DIM_UNKNOWN ((OwbDim) { -1, NULL })
#define OWB_DIM_VALUE(v) ((OwbDim) { (v), NULL })
static inline gboolean owb_dim_is_known (OwbDim d) { return d.value >= 0; }

/* What kind of value flows on a graph edge. Sequences/optionals/maps describe their
 * element through elem_type/dtype (one level is enough for the ops the engine runs). */
typedef enum {
  OWB_VALUE_TENSOR = 0,
  OWB_VALUE_SEQUENCE,
  OWB_VALUE_OPTIONAL,
  OWB_VALUE_MAP,
  OWB_VALUE_SPARSE_TENSOR,
  OWB_VALUE_UNKNOWN_KIND
} OwbValueKind;

/* The type and (possibly partial) shape of a value. rank < 0 means the rank is unknown.
 * Plain data, copied by assignment. */
typedef struct {
  OwbValueKind kind;
  OwbDataType dtype;      /* element type; for maps, the value type */
  OwbDataType key_dtype;  /* maps only */
  OwbValueKind elem_kind; /* sequences/optionals: the kind of the element (tensor...) */
  int rank;
  OwbDim dims[OWB_MAX_RANK];
} OwbValueType;

OWB_API void owb_value_type_init_unknown (OwbValueType *type);
OWB_API void owb_value_type_init_tensor (OwbValueType *type, OwbDataType dtype, int rank, const int64_t *dims);
OWB_API gboolean owb_value_type_is_fully_known (const OwbValueType *type);
/* "float32[batch,3,224,224]"-style text; caller frees. */
OWB_API char *owb_value_type_to_string (const OwbValueType *type);

/* Multiplies dims into an element count; FALSE with an OWB_ERROR_SHAPE error on negative dims or
 * 64-bit overflow. what names the tensor in the message. */
OWB_API gboolean owb_shape_count (int rank, const int64_t *dims, int64_t *count, const char *what, GError **error);

G_END_DECLS
