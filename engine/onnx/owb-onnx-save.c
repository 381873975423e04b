/* owb-onnx-save.c: writes the IR as an .onnx file (protobuf-c), optionally with large tensors
 * in an external data file, through temporary files renamed into place. */
#include <owb/owb-error.h>
#include <owb/owb-model-io.h>

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owb-onnx-private.h"

/* Protobuf refuses messages of 2 GiB and more. */
#define MAX_MESSAGE_SIZE ((gsize) G_MAXINT32)
/* External data offsets are aligned so that the loader can map tensors in place. */
#define EXTERNAL_ALIGNMENT 4096

gpointer
_owb_proto_arena_alloc (OwbProtoArena *arena, gsize size)
{
  gpointer block = g_malloc0 (MAX (size, 1));
  g_ptr_array_add (arena->blocks, block);
  return block;
}

#define ARENA_NEW(arena, type, n) ((type *) _owb_proto_arena_alloc ((arena), sizeof (type) * (gsize) (n)))

/* Empty strings are written as absent fields, as ONNX's own tools do. */
static char *
opt_string (const char *s)
{
  return s && s[0] ? (char *) s : NULL;
}

/* The tensor's bytes in file (little-endian) order: the tensor's own storage on little-endian
 * hosts, a swapped copy otherwise. */
static const guint8 *
little_endian_bytes (OwbProtoArena *arena, const OwbTensor *tensor, gsize nbytes)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
  gsize size = _owb_onnx_component_size (tensor->dtype);
  guint8 *copy = _owb_proto_arena_alloc (arena, nbytes);
  const guint8 *src = tensor->data;
  for (gsize i = 0; i + size <= nbytes; i += size)
    for (gsize k = 0; k < size; k++)
      copy[i + k] = src[i + size - 1 - k];
  return copy;
#else
  (void) arena;
  return tensor->data;
#endif
}

gboolean
_owb_onnx_tensor_to_proto (OwbProtoArena *arena, const OwbTensor *tensor, const char *name,
                           Onnx__TensorProto *proto, GError **error)
{
  if (tensor->kind != OWB_VALUE_TENSOR)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "tensor '%s' is a %s, not a tensor", name ? name : "",
                   tensor->kind == OWB_VALUE_SEQUENCE ? "sequence" : "non-tensor value");
      return FALSE;
    }
  if (tensor->rank < 0 || tensor->rank > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "tensor '%s' has an invalid rank %d",
                   name ? name : "", tensor->rank);
      return FALSE;
    }
  gsize size = owb_data_type_size (tensor->dtype);
  int bits = owb_data_type_packed_bits (tensor->dtype);
  if (!owb_data_type_is_valid (tensor->dtype) || (size == 0 && tensor->dtype != OWB_TYPE_STRING && !bits))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "tensor '%s': element type %s cannot be saved", name ? name : "",
                   owb_data_type_name (tensor->dtype));
      return FALSE;
    }
  proto->name = opt_string (name);
  proto->has_data_type = TRUE;
  proto->data_type = tensor->dtype;
  proto->n_dims = tensor->rank;
  proto->dims = (int64_t *) tensor->dims;
  if (tensor->dtype == OWB_TYPE_STRING)
    {
      char **strings = tensor->data;
      proto->n_string_data = tensor->nelems;
      proto->string_data = ARENA_NEW (arena, ProtobufCBinaryData, tensor->nelems);
      for (int64_t i = 0; i < tensor->nelems; i++)
        {
          proto->string_data[i].data = (guint8 *) (strings && strings[i] ? strings[i] : "");
          proto->string_data[i].len = strlen ((const char *) proto->string_data[i].data);
        }
      return TRUE;
    }
  if (bits)
    {
      /* Sub-byte types: one byte per element in memory, an LSB-first bit stream in the file. */
      gsize packed = ((gsize) tensor->nelems * bits + 7) / 8;
      guint8 *out = _owb_proto_arena_alloc (arena, packed);
      const guint8 *in = tensor->data;
      guint mask = (1u << bits) - 1;
      for (int64_t i = 0; i < tensor->nelems; i++)
        {
          guint64 pos = (guint64) i * bits;
          guint v = in[i] & mask;
          out[pos / 8] |= (guint8) (v << (pos % 8));
          if (pos % 8 + bits > 8)
            out[pos / 8 + 1] |= (guint8) (v >> (8 - pos % 8));
        }
      proto->has_raw_data = TRUE;
      proto->raw_data.len = packed;
      proto->raw_data.data = out;
      return TRUE;
    }
  gsize nbytes = (gsize) tensor->nelems * size;
  proto->has_raw_data = TRUE;
  proto->raw_data.len = nbytes;
  proto->raw_data.data = nbytes ? (guint8 *) little_endian_bytes (arena, tensor, nbytes) : NULL;
  return TRUE;
}

/* Model writing */

typedef struct {
  OwbProtoArena arena;
  /* External data: tensors of at least `threshold` bytes go to `external` (NULL: none). */
  gsize threshold;
  FILE *external;
  const char *external_name;
  guint64 external_offset;
} SaveCtx;

static Onnx__StringStringEntryProto *
string_entry (SaveCtx *ctx, const char *key, const char *value)
{
  Onnx__StringStringEntryProto *e = ARENA_NEW (&ctx->arena, Onnx__StringStringEntryProto, 1);
  onnx__string_string_entry_proto__init (e);
  e->key = (char *) key;
  e->value = (char *) value;
  return e;
}

static gboolean
write_external (SaveCtx *ctx, const OwbTensor *tensor, Onnx__TensorProto *proto, const char *name, GError **error)
{
  static const guint8 zeros[EXTERNAL_ALIGNMENT];
  guint64 pad = (EXTERNAL_ALIGNMENT - ctx->external_offset % EXTERNAL_ALIGNMENT) % EXTERNAL_ALIGNMENT;
  gsize nbytes = proto->raw_data.len;
  if ((pad && fwrite (zeros, 1, pad, ctx->external) != pad)
      || fwrite (proto->raw_data.data, 1, nbytes, ctx->external) != nbytes)
    {
      int err = errno;
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot write external data of tensor '%s': %s", name,
                   g_strerror (err));
      return FALSE;
    }
  ctx->external_offset += pad;
  proto->has_raw_data = FALSE;
  proto->raw_data.data = NULL;
  proto->raw_data.len = 0;
  proto->has_data_location = TRUE;
  proto->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  proto->n_external_data = 3;
  proto->external_data = ARENA_NEW (&ctx->arena, Onnx__StringStringEntryProto *, 3);
  proto->external_data[0] = string_entry (ctx, "location", ctx->external_name);
  char *offset = g_strdup_printf ("%" G_GUINT64_FORMAT, ctx->external_offset);
  char *length = g_strdup_printf ("%" G_GSIZE_FORMAT, nbytes);
  g_ptr_array_add (ctx->arena.blocks, offset);
  g_ptr_array_add (ctx->arena.blocks, length);
  proto->external_data[1] = string_entry (ctx, "offset", offset);
  proto->external_data[2] = string_entry (ctx, "length", length);
  ctx->external_offset += nbytes;
  return TRUE;
}

static Onnx__TensorProto *
tensor_proto (SaveCtx *ctx, const OwbTensor *tensor, const char *name, GError **error)
{
  Onnx__TensorProto *proto = ARENA_NEW (&ctx->arena, Onnx__TensorProto, 1);
  onnx__tensor_proto__init (proto);
  if (!_owb_onnx_tensor_to_proto (&ctx->arena, tensor, name, proto, error))
    return NULL;
  if (ctx->external && proto->has_raw_data && proto->raw_data.len > 0 && proto->raw_data.len >= ctx->threshold
      && !write_external (ctx, tensor, proto, name ? name : "", error))
    return NULL;
  return proto;
}

static Onnx__TensorProto *
dense_to_sparse_values (SaveCtx *ctx, const OwbTensor *dense, Onnx__TensorProto **indices_out, GError **error)
{
  gsize size = owb_data_type_size (dense->dtype);
  const guint8 *data = dense->data;
  static const guint8 zero[16];
  int64_t nnz = 0;
  for (int64_t i = 0; i < dense->nelems; i++)
    nnz += memcmp (data + i * size, zero, size) != 0;
  g_autoptr (OwbTensor) values = owb_tensor_new_uninit (dense->dtype, 1, &nnz, error);
  g_autoptr (OwbTensor) indices = values ? owb_tensor_new_uninit (OWB_TYPE_INT64, 1, &nnz, error) : NULL;
  if (!indices)
    return NULL;
  int64_t k = 0;
  for (int64_t i = 0; i < dense->nelems; i++)
    if (memcmp (data + i * size, zero, size) != 0)
      {
        memcpy ((guint8 *) values->data + k * size, data + i * size, size);
        ((int64_t *) indices->data)[k++] = i;
      }
  /* The protos reference the tensors' storage: keep them alive with the arena. */
  Onnx__TensorProto *vp = ARENA_NEW (&ctx->arena, Onnx__TensorProto, 1);
  Onnx__TensorProto *ip = ARENA_NEW (&ctx->arena, Onnx__TensorProto, 1);
  onnx__tensor_proto__init (vp);
  onnx__tensor_proto__init (ip);
  if (!_owb_onnx_tensor_to_proto (&ctx->arena, values, NULL, vp, error)
      || !_owb_onnx_tensor_to_proto (&ctx->arena, indices, NULL, ip, error))
    return NULL;
  vp->dims = ARENA_NEW (&ctx->arena, int64_t, 1);
  vp->dims[0] = nnz;
  ip->dims = ARENA_NEW (&ctx->arena, int64_t, 1);
  ip->dims[0] = nnz;
  /* raw_data points into the tensors: move ownership of their storage to the arena. */
  guint8 *vcopy = _owb_proto_arena_alloc (&ctx->arena, vp->raw_data.len);
  guint8 *icopy = _owb_proto_arena_alloc (&ctx->arena, ip->raw_data.len);
  if (vp->raw_data.len)
    memcpy (vcopy, vp->raw_data.data, vp->raw_data.len);
  if (ip->raw_data.len)
    memcpy (icopy, ip->raw_data.data, ip->raw_data.len);
  vp->raw_data.data = vcopy;
  ip->raw_data.data = icopy;
  *indices_out = ip;
  return vp;
}

static Onnx__SparseTensorProto *
sparse_proto (SaveCtx *ctx, const OwbTensor *dense, GError **error)
{
  if (dense->kind != OWB_VALUE_TENSOR || owb_data_type_size (dense->dtype) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "a sparse tensor of %s cannot be saved",
                   owb_data_type_name (dense->dtype));
      return NULL;
    }
  Onnx__SparseTensorProto *sp = ARENA_NEW (&ctx->arena, Onnx__SparseTensorProto, 1);
  onnx__sparse_tensor_proto__init (sp);
  sp->values = dense_to_sparse_values (ctx, dense, &sp->indices, error);
  if (!sp->values)
    return NULL;
  sp->n_dims = dense->rank;
  sp->dims = (int64_t *) dense->dims;
  return sp;
}

static Onnx__TypeProto *type_proto (SaveCtx *ctx, const OwbValueType *type);

static Onnx__TensorShapeProto *
shape_proto (SaveCtx *ctx, const OwbValueType *type)
{
  if (type->rank < 0)
    return NULL;
  Onnx__TensorShapeProto *shape = ARENA_NEW (&ctx->arena, Onnx__TensorShapeProto, 1);
  onnx__tensor_shape_proto__init (shape);
  shape->n_dim = MIN (type->rank, OWB_MAX_RANK);
  shape->dim = ARENA_NEW (&ctx->arena, Onnx__TensorShapeProto__Dimension *, shape->n_dim);
  for (gsize i = 0; i < shape->n_dim; i++)
    {
      Onnx__TensorShapeProto__Dimension *dim = ARENA_NEW (&ctx->arena, Onnx__TensorShapeProto__Dimension, 1);
      onnx__tensor_shape_proto__dimension__init (dim);
      if (type->dims[i].param)
        {
          dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
          dim->dim_param = (char *) type->dims[i].param;
        }
      else if (type->dims[i].value >= 0)
        {
          dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
          dim->dim_value = type->dims[i].value;
        }
      shape->dim[i] = dim;
    }
  return shape;
}

/* The element of a container type, rebuilt from the one level the IR keeps. */
static Onnx__TypeProto *
element_type_proto (SaveCtx *ctx, const OwbValueType *container)
{
  if (container->elem_kind == OWB_VALUE_UNKNOWN_KIND)
    return NULL;
  OwbValueType elem = *container;
  elem.kind = container->elem_kind;
  elem.elem_kind = OWB_VALUE_TENSOR;
  return type_proto (ctx, &elem);
}

static Onnx__TypeProto *
type_proto (SaveCtx *ctx, const OwbValueType *type)
{
  Onnx__TypeProto *tp = ARENA_NEW (&ctx->arena, Onnx__TypeProto, 1);
  onnx__type_proto__init (tp);
  switch (type->kind)
    {
    case OWB_VALUE_TENSOR:
      tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
      tp->tensor_type = ARENA_NEW (&ctx->arena, Onnx__TypeProto__Tensor, 1);
      onnx__type_proto__tensor__init (tp->tensor_type);
      tp->tensor_type->has_elem_type = type->dtype != OWB_TYPE_UNDEFINED;
      tp->tensor_type->elem_type = type->dtype;
      tp->tensor_type->shape = shape_proto (ctx, type);
      break;
    case OWB_VALUE_SPARSE_TENSOR:
      tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
      tp->sparse_tensor_type = ARENA_NEW (&ctx->arena, Onnx__TypeProto__SparseTensor, 1);
      onnx__type_proto__sparse_tensor__init (tp->sparse_tensor_type);
      tp->sparse_tensor_type->has_elem_type = type->dtype != OWB_TYPE_UNDEFINED;
      tp->sparse_tensor_type->elem_type = type->dtype;
      tp->sparse_tensor_type->shape = shape_proto (ctx, type);
      break;
    case OWB_VALUE_SEQUENCE:
      tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
      tp->sequence_type = ARENA_NEW (&ctx->arena, Onnx__TypeProto__Sequence, 1);
      onnx__type_proto__sequence__init (tp->sequence_type);
      tp->sequence_type->elem_type = element_type_proto (ctx, type);
      break;
    case OWB_VALUE_OPTIONAL:
      tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
      tp->optional_type = ARENA_NEW (&ctx->arena, Onnx__TypeProto__Optional, 1);
      onnx__type_proto__optional__init (tp->optional_type);
      tp->optional_type->elem_type = element_type_proto (ctx, type);
      break;
    case OWB_VALUE_MAP:
      tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
      tp->map_type = ARENA_NEW (&ctx->arena, Onnx__TypeProto__Map, 1);
      onnx__type_proto__map__init (tp->map_type);
      tp->map_type->has_key_type = TRUE;
      tp->map_type->key_type = type->key_dtype;
      tp->map_type->value_type = element_type_proto (ctx, type);
      break;
    default:
      break;
    }
  return tp;
}

static Onnx__ValueInfoProto **
value_infos_proto (SaveCtx *ctx, const GPtrArray *infos)
{
  Onnx__ValueInfoProto **list = ARENA_NEW (&ctx->arena, Onnx__ValueInfoProto *, infos->len);
  for (guint i = 0; i < infos->len; i++)
    {
      const OwbValueInfo *info = g_ptr_array_index (infos, i);
      Onnx__ValueInfoProto *vp = ARENA_NEW (&ctx->arena, Onnx__ValueInfoProto, 1);
      onnx__value_info_proto__init (vp);
      vp->name = info->name;
      vp->doc_string = opt_string (info->doc_string);
      vp->type = info->has_type ? type_proto (ctx, &info->type) : NULL;
      list[i] = vp;
    }
  return list;
}

static Onnx__GraphProto *graph_proto (SaveCtx *ctx, const OwbGraph *graph, GError **error);

static Onnx__AttributeProto *
attribute_proto (SaveCtx *ctx, const OwbAttribute *attr, GError **error)
{
  Onnx__AttributeProto *ap = ARENA_NEW (&ctx->arena, Onnx__AttributeProto, 1);
  onnx__attribute_proto__init (ap);
  ap->name = attr->name;
  ap->doc_string = opt_string (attr->doc_string);
  ap->has_type = TRUE;
  ap->type = (Onnx__AttributeProto__AttributeType) attr->type;
  if (attr->ref_attr_name && attr->ref_attr_name[0])
    {
      ap->ref_attr_name = attr->ref_attr_name;
      return ap;
    }
  gsize n = attr->n > 0 ? (gsize) attr->n : 0;
  switch (attr->type)
    {
    case OWB_ATTR_FLOAT:
      ap->has_f = TRUE;
      ap->f = attr->f;
      break;
    case OWB_ATTR_INT:
      ap->has_i = TRUE;
      ap->i = attr->i;
      break;
    case OWB_ATTR_STRING:
      ap->has_s = TRUE;
      ap->s.data = (guint8 *) (attr->s ? attr->s : "");
      ap->s.len = attr->s ? MAX (attr->s_len, strlen (attr->s)) : 0;
      break;
    case OWB_ATTR_TENSOR:
      if (!attr->t || !(ap->t = tensor_proto (ctx, attr->t, NULL, error)))
        goto failed;
      break;
    case OWB_ATTR_SPARSE_TENSOR:
      if (!attr->t || !(ap->sparse_tensor = sparse_proto (ctx, attr->t, error)))
        goto failed;
      break;
    case OWB_ATTR_GRAPH:
      if (!attr->g || !(ap->g = graph_proto (ctx, attr->g, error)))
        goto failed;
      break;
    case OWB_ATTR_TYPE_PROTO:
      ap->tp = type_proto (ctx, &attr->tp);
      break;
    case OWB_ATTR_FLOATS:
      ap->n_floats = attr->floats ? n : 0;
      ap->floats = attr->floats;
      break;
    case OWB_ATTR_INTS:
      ap->n_ints = attr->ints ? n : 0;
      ap->ints = attr->ints;
      break;
    case OWB_ATTR_STRINGS:
      ap->n_strings = attr->strings ? n : 0;
      ap->strings = ARENA_NEW (&ctx->arena, ProtobufCBinaryData, ap->n_strings);
      for (gsize i = 0; i < ap->n_strings; i++)
        {
          ap->strings[i].data = (guint8 *) (attr->strings[i] ? attr->strings[i] : "");
          ap->strings[i].len = strlen ((const char *) ap->strings[i].data);
        }
      break;
    case OWB_ATTR_TENSORS:
      ap->n_tensors = attr->tensors ? n : 0;
      ap->tensors = ARENA_NEW (&ctx->arena, Onnx__TensorProto *, ap->n_tensors);
      for (gsize i = 0; i < ap->n_tensors; i++)
        if (!attr->tensors[i] || !(ap->tensors[i] = tensor_proto (ctx, attr->tensors[i], NULL, error)))
          goto failed;
      break;
    case OWB_ATTR_SPARSE_TENSORS:
      ap->n_sparse_tensors = attr->tensors ? n : 0;
      ap->sparse_tensors = ARENA_NEW (&ctx->arena, Onnx__SparseTensorProto *, ap->n_sparse_tensors);
      for (gsize i = 0; i < ap->n_sparse_tensors; i++)
        if (!attr->tensors[i] || !(ap->sparse_tensors[i] = sparse_proto (ctx, attr->tensors[i], error)))
          goto failed;
      break;
    case OWB_ATTR_GRAPHS:
      ap->n_graphs = attr->graphs ? n : 0;
      ap->graphs = ARENA_NEW (&ctx->arena, Onnx__GraphProto *, ap->n_graphs);
      for (gsize i = 0; i < ap->n_graphs; i++)
        if (!attr->graphs[i] || !(ap->graphs[i] = graph_proto (ctx, attr->graphs[i], error)))
          goto failed;
      break;
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s' has type %d, which cannot be saved",
                   attr->name, (int) attr->type);
      return NULL;
    }
  return ap;

failed:
  if (error && *error == NULL)
    g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s' has no value", attr->name);
  else
    g_prefix_error (error, "attribute '%s': ", attr->name);
  return NULL;
}

static Onnx__NodeProto *
node_proto (SaveCtx *ctx, const OwbNode *node, GError **error)
{
  Onnx__NodeProto *np = ARENA_NEW (&ctx->arena, Onnx__NodeProto, 1);
  onnx__node_proto__init (np);
  np->name = opt_string (node->name);
  np->op_type = node->op_type;
  np->domain = opt_string (node->domain);
  np->doc_string = opt_string (node->doc_string);
  np->n_input = node->n_inputs;
  np->input = node->inputs;
  np->n_output = node->n_outputs;
  np->output = node->outputs;
  np->n_attribute = node->n_attributes;
  np->attribute = ARENA_NEW (&ctx->arena, Onnx__AttributeProto *, node->n_attributes);
  for (int i = 0; i < node->n_attributes; i++)
    if (!(np->attribute[i] = attribute_proto (ctx, &node->attributes[i], error)))
      {
        g_autofree char *what = owb_node_describe (node);
        g_prefix_error (error, "%s: ", what);
        return NULL;
      }
  return np;
}

static Onnx__GraphProto *
graph_proto (SaveCtx *ctx, const OwbGraph *graph, GError **error)
{
  Onnx__GraphProto *gp = ARENA_NEW (&ctx->arena, Onnx__GraphProto, 1);
  onnx__graph_proto__init (gp);
  gp->name = opt_string (graph->name);
  gp->doc_string = opt_string (graph->doc_string);
  gp->n_node = graph->nodes->len;
  gp->node = ARENA_NEW (&ctx->arena, Onnx__NodeProto *, gp->n_node);
  for (guint i = 0; i < graph->nodes->len; i++)
    if (!(gp->node[i] = node_proto (ctx, g_ptr_array_index (graph->nodes, i), error)))
      return NULL;
  gp->n_initializer = graph->initializers->len;
  gp->initializer = ARENA_NEW (&ctx->arena, Onnx__TensorProto *, gp->n_initializer);
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      const char *name = g_ptr_array_index (graph->initializer_names, i);
      if (!(gp->initializer[i] = tensor_proto (ctx, g_ptr_array_index (graph->initializers, i), name, error)))
        return NULL;
    }
  gp->n_input = graph->inputs->len;
  gp->input = value_infos_proto (ctx, graph->inputs);
  gp->n_output = graph->outputs->len;
  gp->output = value_infos_proto (ctx, graph->outputs);
  gp->n_value_info = graph->value_infos->len;
  gp->value_info = value_infos_proto (ctx, graph->value_infos);
  return gp;
}

static Onnx__ModelProto *
model_proto (SaveCtx *ctx, const OwbModel *model, GError **error)
{
  if (model->graph == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "the model has no graph");
      return NULL;
    }
  Onnx__ModelProto *mp = ARENA_NEW (&ctx->arena, Onnx__ModelProto, 1);
  onnx__model_proto__init (mp);
  mp->has_ir_version = TRUE;
  mp->ir_version = model->ir_version;
  mp->producer_name = opt_string (model->producer_name);
  mp->producer_version = opt_string (model->producer_version);
  mp->domain = opt_string (model->domain);
  mp->has_model_version = model->model_version != 0;
  mp->model_version = model->model_version;
  mp->doc_string = opt_string (model->doc_string);
  mp->n_opset_import = model->opset_imports->len;
  mp->opset_import = ARENA_NEW (&ctx->arena, Onnx__OperatorSetIdProto *, mp->n_opset_import);
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      Onnx__OperatorSetIdProto *op = ARENA_NEW (&ctx->arena, Onnx__OperatorSetIdProto, 1);
      onnx__operator_set_id_proto__init (op);
      op->domain = imp->domain ? imp->domain : "";
      op->has_version = TRUE;
      op->version = imp->version;
      mp->opset_import[i] = op;
    }
  mp->n_metadata_props = model->metadata->len;
  mp->metadata_props = ARENA_NEW (&ctx->arena, Onnx__StringStringEntryProto *, mp->n_metadata_props);
  for (guint i = 0; i < model->metadata->len; i++)
    {
      const OwbStringPair *pair = &g_array_index (model->metadata, OwbStringPair, i);
      mp->metadata_props[i] = string_entry (ctx, pair->key, pair->value);
    }
  mp->graph = graph_proto (ctx, model->graph, error);
  return mp->graph ? mp : NULL;
}

static gboolean
check_size (gsize size, gboolean external, GError **error)
{
  if (size <= MAX_MESSAGE_SIZE)
    return TRUE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
               "the model serialises to %" G_GSIZE_FORMAT " bytes, more than protobuf's 2 GiB limit; %s", size,
               external ? "lower the external data threshold so that more tensors go to the external file"
                        : "save it with external data (OwbSaveOptions.external_threshold)");
  return FALSE;
}

GBytes *
owb_model_save_to_bytes (const OwbModel *model, GError **error)
{
  SaveCtx ctx = { { g_ptr_array_new_with_free_func (g_free) } };
  GBytes *bytes = NULL;
  Onnx__ModelProto *mp = model_proto (&ctx, model, error);
  if (mp)
    {
      gsize size = onnx__model_proto__get_packed_size (mp);
      if (check_size (size, FALSE, error))
        {
          guint8 *buffer = g_try_malloc (MAX (size, 1));
          if (!buffer)
            g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM,
                         "cannot allocate %" G_GSIZE_FORMAT " bytes to save the model", size);
          else
            {
              onnx__model_proto__pack (mp, buffer);
              bytes = g_bytes_new_take (buffer, size);
            }
        }
    }
  g_ptr_array_unref (ctx.arena.blocks);
  return bytes;
}

typedef struct {
  ProtobufCBuffer base;
  FILE *file;
} FileBuffer;

static void
file_buffer_append (ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
  FileBuffer *fb = (FileBuffer *) buffer;
  /* A failed write sets the stream's error flag, checked when the file is closed. */
  if (len)
    (void) fwrite (data, 1, len, fb->file);
}

gboolean
_owb_atomic_file_write_message (OwbAtomicFile *af, const ProtobufCMessage *message)
{
  FileBuffer fb = { { file_buffer_append }, af->file };
  protobuf_c_message_pack_to_buffer (message, &fb.base);
  return !ferror (af->file);
}

/* By name as well as by identity: a file the model read from may have been replaced since (a save
 * in place renames a new file over it), and the model on disk still names it. */
static gboolean
names_external_file (const OwbModel *model, const char *path)
{
  char *real = realpath (path, NULL);
  if (real == NULL)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *base = g_path_get_basename (path);
      char *real_dir = realpath (dir, NULL);
      if (real_dir == NULL)
        return FALSE;
      char *joined = g_build_filename (real_dir, base, NULL);
      free (real_dir);
      real = strdup (joined);
      g_free (joined);
    }
  gboolean found = FALSE;
  for (guint i = 0; model->mappings && i < model->mappings->len && !found; i++)
    found = strcmp (((const OwbMappedFile *) g_ptr_array_index (model->mappings, i))->path, real) == 0;
  free (real);
  return found;
}

static gboolean
plain_file_name (const char *name)
{
  return name && name[0] && strchr (name, '/') == NULL && strchr (name, '\\') == NULL && strcmp (name, ".") != 0
         && strcmp (name, "..") != 0;
}

gboolean
owb_model_save_file (const OwbModel *model, const char *path, const OwbSaveOptions *options, GError **error)
{
  gboolean external = options && options->external_threshold > 0;
  g_autofree char *default_name = NULL;
  const char *external_name = NULL;
  g_autofree char *external_path = NULL;
  g_auto (OwbFileIdentity) model_id = { 0 };
  g_auto (OwbFileIdentity) external_id = { 0 };

  /* Never replace a file this model still reads tensors from: the model file would end up
   * pointing into itself, and any other model using that file would break. Files are compared
   * by identity, so a symbolic link or a hard link to one is refused too. */
  if (!owb_file_identity_init (&model_id, path, error))
    return FALSE;
  if (owb_model_find_external_file (model, &model_id) || names_external_file (model, path))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "refusing to save over '%s': the model reads its external data from that file", path);
      return FALSE;
    }
  if (external)
    {
      if (options->external_data_file)
        external_name = options->external_data_file;
      else
        {
          g_autofree char *base = g_path_get_basename (path);
          external_name = default_name = g_strconcat (base, ".data", NULL);
        }
      if (!plain_file_name (external_name))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "external data file '%s' must be a plain file name (it is written beside the model)",
                       external_name);
          return FALSE;
        }
      g_autofree char *dir = g_path_get_dirname (path);
      external_path = g_build_filename (dir, external_name, NULL);
      if (!owb_file_identity_init (&external_id, external_path, error))
        return FALSE;
      if (owb_file_identity_equal (&external_id, &model_id))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "external data file '%s' is the model file itself", external_name);
          return FALSE;
        }
      /* The external data file may be one the model was loaded from: its tensors were copied at
       * load, so saving a model in place (model and data together) is fine. Writing another
       * model's data over it is the caller's to refuse (owb optimize does, by identity). */
    }

  SaveCtx ctx = { { g_ptr_array_new_with_free_func (g_free) } };
  OwbAtomicFile model_file = { 0 }, data_file = { 0 };
  gboolean ok = FALSE;
  if (external)
    {
      if (!_owb_atomic_file_open (&data_file, external_path, error))
        goto out;
      ctx.external = data_file.file;
      ctx.external_name = external_name;
      ctx.threshold = options->external_threshold;
    }
  Onnx__ModelProto *mp = model_proto (&ctx, model, error);
  if (!mp)
    goto out;
  if (!check_size (onnx__model_proto__get_packed_size (mp), external, error))
    goto out;
  if (!_owb_atomic_file_open (&model_file, path, error))
    goto out;
  _owb_atomic_file_write_message (&model_file, &mp->base);
  /* Both files complete on disk before either replaces anything. */
  if ((external && !_owb_atomic_file_close (&data_file, error)) || !_owb_atomic_file_close (&model_file, error))
    goto out;
  if (external && !_owb_atomic_file_commit (&data_file, error))
    goto out;
  ok = _owb_atomic_file_commit (&model_file, error);

out:
  _owb_atomic_file_abort (&data_file);
  _owb_atomic_file_abort (&model_file);
  g_ptr_array_unref (ctx.arena.blocks);
  if (!ok)
    g_prefix_error (error, "%s: ", path);
  return ok;
}
