/* owb-onnx-load.c: reads .onnx files (protobuf-c) into the IR: tensors, types, subgraphs,
 * external data (memory-mapped, confined to the model's folder) and model-local functions. */
#include <owb/owb-error.h>
#include <owb/owb-model-io.h>
#include <owb/owb-validate.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef G_OS_UNIX
#include <sys/mman.h>
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

#include "owb-onnx-private.h"

/* Subgraphs (If/Loop/Scan bodies) nested deeper than this are refused. */
#define MAX_GRAPH_DEPTH 64
/* Function calls expanded inside function bodies deeper than this are taken as recursion. */
#define MAX_FUNCTION_DEPTH 32
/* Nodes that expanding model-local functions may create in one model: a function calling
 * another twice, 30 levels deep, would otherwise ask for 2^30 nodes. */
#define MAX_EXPANDED_NODES 1000000
/* ...and relative to the model's size: a real model spends bytes on what it computes, while a
 * 3 KB mutant of a doubling chain expanding to 60,000 nodes costs seconds and hundreds of MB
 * to load, infer and optimize. EXPANSION_FLOOR nodes plus EXPANSION_PER_BYTE per byte. */
#define EXPANSION_FLOOR 16384
#define EXPANSION_PER_BYTE 4

/* Protobuf-c memory: plain g_try_malloc/g_free, so that byte buffers can be stolen. */

static void *
pb_alloc (void *allocator_data, size_t size)
{
  return g_try_malloc (size ? size : 1);
}

static void
pb_free (void *allocator_data, void *pointer)
{
  g_free (pointer);
}

static ProtobufCAllocator pb_allocator = { pb_alloc, pb_free, NULL };

ProtobufCAllocator *
_owb_onnx_allocator (void)
{
  return &pb_allocator;
}

void
_owb_mapped_file_free (gpointer p)
{
  OwbMappedFile *mapped = p;
  if (mapped == NULL)
    return;
  if (mapped->fd >= 0)
    close (mapped->fd);
  g_free (mapped->path);
  g_free (mapped);
}

/* Wire-format pre-check */

static gboolean
read_varint (const guint8 **p, const guint8 *end, guint64 *value)
{
  guint64 v = 0;
  for (int i = 0; i < 10; i++)
    {
      if (*p >= end)
        return FALSE;
      guint8 b = *(*p)++;
      v |= (guint64) (b & 0x7f) << (7 * i);
      if (!(b & 0x80))
        {
          *value = v;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
check_wire (const ProtobufCMessageDescriptor *desc, const guint8 *p, const guint8 *end, int depth,
            const char **reason)
{
  if (depth > OWB_ONNX_MAX_MESSAGE_DEPTH)
    {
      *reason = "messages are nested too deeply";
      return FALSE;
    }
  while (p < end)
    {
      guint64 key, len, skip;
      if (!read_varint (&p, end, &key))
        goto truncated;
      guint64 number = key >> 3;
      if (number == 0 || number > 0x1fffffff)
        {
          *reason = "invalid field number";
          return FALSE;
        }
      switch (key & 7)
        {
        case 0:
          if (!read_varint (&p, end, &skip))
            goto truncated;
          break;
        case 1:
          if (end - p < 8)
            goto truncated;
          p += 8;
          break;
        case 5:
          if (end - p < 4)
            goto truncated;
          p += 4;
          break;
        case 2:
          {
            if (!read_varint (&p, end, &len))
              goto truncated;
            if (len > (guint64) (end - p))
              goto truncated;
            const ProtobufCFieldDescriptor *field
                = desc ? protobuf_c_message_descriptor_get_field (desc, (unsigned) number) : NULL;
            if (field && field->type == PROTOBUF_C_TYPE_MESSAGE
                && !check_wire (field->descriptor, p, p + len, depth + 1, reason))
              return FALSE;
            p += len;
            break;
          }
        default:
          *reason = "unsupported protobuf wire type";
          return FALSE;
        }
    }
  return TRUE;
truncated:
  *reason = "the data ends in the middle of a field (truncated?)";
  return FALSE;
}

gboolean
_owb_onnx_check_wire (const ProtobufCMessageDescriptor *descriptor, const guint8 *data, gsize size,
                      const char **reason)
{
  return check_wire (descriptor, data, data + size, 0, reason);
}

/* Skeleton: the model's wire data without the large raw_data of the main graph's initializers.
 * protobuf-c copies every bytes field while unpacking, so unpacking the file as it is would keep
 * the weights twice in memory (the mapped file and the copies). Those payloads are written as
 * empty fields in a copy of everything else, and copied from the file into the tensors later. */

/* raw_data at least this large is left out of the skeleton. */
#define SKELETON_MIN_PAYLOAD 4096
/* Payloads are copied in chunks of this size, releasing the file's pages after each, so that
 * the mapped pages never pile up while copying a large tensor. */
#define PAYLOAD_CHUNK ((gsize) 16 << 20)
/* Tensors are not asked for transparent huge pages (MADV_HUGEPAGE): with the kernel's usual
 * defrag=madvise, a fault in such memory may compact memory synchronously to find a huge page.
 * alexnet's 233 MB then loaded in 70 ms to 2.6 s, without it in 158-221 ms (alternated runs). */

/* Field numbers: ModelProto.graph, GraphProto.initializer, TensorProto.raw_data. */
enum { FIELD_MODEL_GRAPH = 7, FIELD_GRAPH_INITIALIZER = 5, FIELD_TENSOR_RAW_DATA = 9 };

/* Where an initializer's raw_data lies in the original data; length 0: kept in the skeleton. */
typedef struct {
  gsize offset;
  gsize length;
  gsize unread; /* where its hole starts (see Filler), length when it has none */
} Payload;

/* One field as found on the wire: from its key (start) to the next field (next); value and len
 * are the contents of a length-delimited field. `plain`: its key and length are minimally encoded
 * and the length fits 32 bits, as protobuf-c expects (it refuses longer prefixes); a field the
 * skeleton re-encodes must be plain, or protobuf-c would accept in the skeleton what it refuses in
 * the original. */
typedef struct {
  guint64 number;
  guint wire;
  gboolean plain;
  const guint8 *start;
  const guint8 *value;
  gsize len;
  const guint8 *next;
} WireField;

static gsize varint_size (guint64 v);

static gboolean
next_field (const guint8 *p, const guint8 *end, WireField *f)
{
  guint64 key, v;
  f->start = p;
  f->value = NULL;
  f->len = 0;
  if (!read_varint (&p, end, &key))
    return FALSE;
  f->number = key >> 3;
  f->wire = key & 7;
  f->plain = (gsize) (p - f->start) == varint_size (key);
  if (f->number == 0 || f->number > 0x1fffffff)
    return FALSE;
  switch (f->wire)
    {
    case 0:
      if (!read_varint (&p, end, &v))
        return FALSE;
      break;
    case 1:
      if (end - p < 8)
        return FALSE;
      p += 8;
      break;
    case 5:
      if (end - p < 4)
        return FALSE;
      p += 4;
      break;
    case 2:
      {
        const guint8 *prefix = p;
        if (!read_varint (&p, end, &v) || v > (guint64) (end - p))
          return FALSE;
        f->plain = f->plain && (gsize) (p - prefix) == varint_size (v) && v <= G_MAXUINT32;
      }
      f->value = p;
      f->len = (gsize) v;
      p += v;
      break;
    default:
      return FALSE;
    }
  f->next = p;
  return TRUE;
}

static gsize
varint_size (guint64 v)
{
  gsize n = 1;
  while (v >= 0x80)
    {
      v >>= 7;
      n++;
    }
  return n;
}

/* Where the skeleton is written; NULL while measuring. Bounded, in case the data changes
 * between measuring and writing (a file rewritten under its mapping). */
typedef struct {
  guint8 *p;
  guint8 *end;
  gboolean overflow;
} Out;

static void
emit (Out *out, const void *src, gsize n)
{
  if (!out || n == 0)
    return;
  if (out->overflow || n > (gsize) (out->end - out->p))
    {
      out->overflow = TRUE;
      return;
    }
  memcpy (out->p, src, n);
  out->p += n;
}

static void
emit_varint (Out *out, guint64 v)
{
  guint8 buf[10];
  gsize n = 0;
  do
    {
      buf[n] = v & 0x7f;
      v >>= 7;
      if (v)
        buf[n] |= 0x80;
      n++;
    }
  while (v);
  emit (out, buf, n);
}

/* A length-delimited field's key and length prefix; returns their size. */
static gsize
emit_header (Out *out, guint64 number, gsize len)
{
  guint64 key = number << 3 | 2;
  emit_varint (out, key);
  emit_varint (out, len);
  return varint_size (key) + varint_size (len);
}

/* A TensorProto body, its raw_data written empty when large (*payload says where it was). A
 * repeated raw_data (the last one would win) or one with the wrong wire type is left to the
 * ordinary path: FALSE. */
static gboolean
skeleton_tensor (const guint8 *base, const guint8 *p, const guint8 *end, Out *out, gsize *size,
                 Payload *payload)
{
  gsize n = 0;
  gboolean seen_raw = FALSE;
  payload->offset = payload->length = 0;
  while (p < end)
    {
      WireField f;
      if (!next_field (p, end, &f))
        return FALSE;
      if (f.number == FIELD_TENSOR_RAW_DATA)
        {
          if (seen_raw || f.wire != 2 || !f.plain)
            return FALSE;
          seen_raw = TRUE;
          if (f.len >= SKELETON_MIN_PAYLOAD)
            {
              payload->offset = (gsize) (f.value - base);
              payload->length = payload->unread = f.len;
              n += emit_header (out, f.number, 0);
              p = f.next;
              continue;
            }
        }
      emit (out, f.start, (gsize) (f.next - f.start));
      n += (gsize) (f.next - f.start);
      p = f.next;
    }
  *size = n;
  return TRUE;
}

/* A GraphProto body with its initializers through skeleton_tensor; when writing, the payloads
 * left out are recorded by initializer index. */
static gboolean
skeleton_graph (const guint8 *base, const guint8 *p, const guint8 *end, Out *out, gsize *size,
                GArray *payloads)
{
  gsize n = 0;
  guint index = 0;
  while (p < end)
    {
      WireField f;
      if (!next_field (p, end, &f))
        return FALSE;
      if (f.number != FIELD_GRAPH_INITIALIZER)
        {
          emit (out, f.start, (gsize) (f.next - f.start));
          n += (gsize) (f.next - f.start);
          p = f.next;
          continue;
        }
      if (f.wire != 2 || !f.plain)
        return FALSE;
      gsize body;
      Payload payload;
      if (!skeleton_tensor (base, f.value, f.value + f.len, NULL, &body, &payload))
        return FALSE;
      n += emit_header (out, f.number, body) + body;
      if (out)
        {
          if (!skeleton_tensor (base, f.value, f.value + f.len, out, &body, &payload))
            return FALSE;
          if (payload.length)
            {
              if (index >= payloads->len)
                g_array_set_size (payloads, index + 1);
              g_array_index (payloads, Payload, index) = payload;
            }
        }
      if (index == G_MAXUINT)
        return FALSE;
      index++;
      p = f.next;
    }
  *size = n;
  return TRUE;
}

/* A ModelProto with its graph through skeleton_graph. A repeated graph field (protobuf-c would
 * merge the two) is left to the ordinary path. */
static gboolean
skeleton_model (const guint8 *p, const guint8 *end, Out *out, gsize *size, GArray *payloads)
{
  const guint8 *base = p;
  gsize n = 0;
  gboolean seen_graph = FALSE;
  while (p < end)
    {
      WireField f;
      if (!next_field (p, end, &f))
        return FALSE;
      if (f.number != FIELD_MODEL_GRAPH)
        {
          emit (out, f.start, (gsize) (f.next - f.start));
          n += (gsize) (f.next - f.start);
          p = f.next;
          continue;
        }
      if (f.wire != 2 || !f.plain || seen_graph)
        return FALSE;
      seen_graph = TRUE;
      gsize body;
      if (!skeleton_graph (base, f.value, f.value + f.len, NULL, &body, payloads))
        return FALSE;
      n += emit_header (out, f.number, body) + body;
      if (out && !skeleton_graph (base, f.value, f.value + f.len, out, &body, payloads))
        return FALSE;
      p = f.next;
    }
  *size = n;
  return TRUE;
}

/* The skeleton of a model's wire data (g_free it) and its payloads, or NULL when no payload is
 * large enough to leave out or anything looks odd: the caller then unpacks the original, whose
 * errors the usual checks report. */
static guint8 *
build_skeleton (const guint8 *data, gsize size, gsize *skeleton_size, GArray **payloads)
{
  gsize n;
  if (!skeleton_model (data, data + size, NULL, &n, NULL) || n > size)
    return NULL;
  /* Leaving out a payload saves at least this much; less means there was none. */
  if (size - n < SKELETON_MIN_PAYLOAD)
    return NULL;
  guint8 *skeleton = g_try_malloc (MAX (n, 1));
  if (!skeleton)
    return NULL;
  GArray *found = g_array_new (FALSE, TRUE, sizeof (Payload));
  Out out = { skeleton, skeleton + n, FALSE };
  gsize written;
  if (!skeleton_model (data, data + size, &out, &written, found) || out.overflow || written != n
      || out.p != skeleton + n || found->len == 0)
    {
      g_free (skeleton);
      g_array_unref (found);
      return NULL;
    }
  *skeleton_size = n;
  *payloads = found;
  return skeleton;
}

/* Sparse reading of a model file. The file is read into private memory, but the large raw_data
 * payloads of the main graph's initializers (exactly those the skeleton leaves out) are not: they
 * are read later straight into their tensors. Reading them first and copying them after touched
 * every weight page twice, and fresh pages are what a load pays for (alexnet: 47% of its load was
 * the read into the buffer, 39% the copy out of it). The gaps left are "holes"; nothing but the
 * payload copies reads them, and anything that does not match a payload is read before use. */

/* raw_data at least this large is not read with the rest of the file. */
#define HOLE_MIN ((gsize) 256 << 10)
/* Bytes read at once while scanning, so that small fields do not cost a read each. */
#define FILL_AHEAD ((gsize) 64 << 10)

typedef struct {
  gsize start;
  gsize end;
} Hole;

/* The file being read: everything in [0, frontier) is read or a hole. */
typedef struct {
  int fd;
  const char *path;
  guint8 *buf;
  gsize size;
  gsize frontier;
  GArray *holes;
} Filler;

/* Makes the bytes before `end` readable (end <= size). */
static gboolean
filler_need (Filler *f, gsize end, GError **error)
{
  if (end <= f->frontier)
    return TRUE;
  gsize upto = MIN (f->size, MAX (end, f->frontier + FILL_AHEAD));
  if (!_owb_pread_exact (f->fd, f->buf + f->frontier, upto - f->frontier, f->frontier, "model", f->path, error))
    return FALSE;
  f->frontier = upto;
  return TRUE;
}

/* The key and, for length-delimited fields, the value's range of the field at *off; FALSE on
 * anything malformed (the scan then stops and the rest is read as it is). */
static gboolean
filler_field (Filler *f, gsize *off, gsize end, guint64 *number, guint *wire, gsize *value, gsize *len,
              gboolean *ok, GError **error)
{
  guint64 key, v;
  *ok = FALSE;
  if (!filler_need (f, MIN (*off + 20, f->size), error))
    return FALSE;
  const guint8 *p = f->buf + *off, *e = f->buf + MIN (end, f->frontier);
  if (!read_varint (&p, e, &key))
    return TRUE;
  *number = key >> 3;
  *wire = key & 7;
  switch (*wire)
    {
    case 0:
      if (!read_varint (&p, e, &v))
        return TRUE;
      break;
    case 1:
    case 5:
      v = *wire == 1 ? 8 : 4;
      if ((gsize) (f->buf + end - p) < v)
        return TRUE;
      p += v;
      break;
    case 2:
      if (!read_varint (&p, e, &v) || v > (guint64) (f->buf + end - p))
        return TRUE;
      *value = (gsize) (p - f->buf);
      *len = (gsize) v;
      p += v;
      break;
    default:
      return TRUE;
    }
  *off = (gsize) (p - f->buf);
  *ok = TRUE;
  return TRUE;
}

/* Walks ModelProto.graph → GraphProto.initializer → TensorProto.raw_data (level 0, 1, 2) and
 * leaves the large raw_data unread. */
static gboolean
filler_scan (Filler *f, gsize off, gsize end, int level, GError **error)
{
  static const guint64 descend[] = { FIELD_MODEL_GRAPH, FIELD_GRAPH_INITIALIZER, FIELD_TENSOR_RAW_DATA };
  while (off < end)
    {
      guint64 number;
      guint wire;
      gsize value = 0, len = 0;
      gboolean ok;
      if (!filler_field (f, &off, end, &number, &wire, &value, &len, &ok, error))
        return FALSE;
      if (!ok)
        return TRUE;
      if (wire != 2 || number != descend[level])
        continue;
      if (level < 2)
        {
          if (!filler_scan (f, value, value + len, level + 1, error))
            return FALSE;
        }
      else if (len >= HOLE_MIN && value + len > f->frontier && value + len - MAX (value, f->frontier) >= HOLE_MIN)
        {
          Hole h = { MAX (value, f->frontier), value + len };
          g_array_append_val (f->holes, h);
          f->frontier = h.end;
        }
    }
  return TRUE;
}

/* A model file read by the loader: its holes are read from fd when needed. */
typedef struct {
  int fd;
  const char *path;
  GArray *holes;
  GCancellable *cancellable; /* checked between initializers: most of a large model's reading */
} ModelFile;

/* Reads the holes in; `keep` (or NULL) marks those to leave. */
static gboolean
fill_holes (int fd, const char *path, guint8 *buf, GArray *holes, const gboolean *keep, GError **error)
{
  for (guint i = 0; holes && i < holes->len; i++)
    {
      const Hole *h = &g_array_index (holes, Hole, i);
      if ((!keep || !keep[i]) && !_owb_pread_exact (fd, buf + h->start, h->end - h->start, h->start, "model", path, error))
        return FALSE;
    }
  return TRUE;
}

/* Gives the file's pages between *done and `upto` (page-aligned inwards) back to the kernel:
 * the mapping is private and read-only, so they would be read again from the file if touched. */
static void
release_pages (const guint8 **done, const guint8 *upto)
{
#if defined(G_OS_UNIX) && defined(MADV_DONTNEED)
  long ps = sysconf (_SC_PAGESIZE);
  gsize page = ps > 0 ? (gsize) ps : 4096;
  guintptr from = ((guintptr) *done + page - 1) & ~(guintptr) (page - 1);
  guintptr to = (guintptr) upto & ~(guintptr) (page - 1);
  if (to > from)
    {
      madvise ((void *) from, to - from, MADV_DONTNEED);
      *done = (const guint8 *) to;
    }
#endif
}

/* Byte order: files are little-endian. */

#if G_BYTE_ORDER == G_BIG_ENDIAN
static void
swap_in_place (void *data, gsize nbytes, gsize size)
{
  guint8 *b = data;
  if (size < 2)
    return;
  for (gsize i = 0; i + size <= nbytes; i += size)
    for (gsize k = 0; k < size / 2; k++)
      {
        guint8 t = b[i + k];
        b[i + k] = b[i + size - 1 - k];
        b[i + size - 1 - k] = t;
      }
}
#endif

/* Tensors */

/* The name of any ONNX element type, including those the engine does not support; NULL for
 * values that are not types at all. */
static const char *
onnx_type_name (int type)
{
  if (owb_data_type_is_valid (type))
    return owb_data_type_name (type);
  const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value (&onnx__tensor_proto__data_type__descriptor, type);
  return v && type != 0 ? v->name : NULL;
}

/* Sub-byte elements: an LSB-first bit stream in files, one byte per element in memory
 * (sign-extended for the signed integer types). */
static void
unpack_bits (guint8 *dest, const guint8 *src, int64_t n, OwbDataType dtype)
{
  int bits = owb_data_type_packed_bits (dtype);
  guint mask = (1u << bits) - 1;
  gboolean is_signed = dtype == OWB_TYPE_INT4 || dtype == OWB_TYPE_INT2;
  for (int64_t i = 0; i < n; i++)
    {
      guint64 pos = (guint64) i * bits;
      guint v = src[pos / 8] >> (pos % 8);
      if (pos % 8 + bits > 8)
        v |= (guint) src[pos / 8 + 1] << (8 - pos % 8);
      v &= mask;
      if (is_signed && (v & (1u << (bits - 1))))
        v |= ~mask;
      dest[i] = (guint8) v;
    }
}

static const char *
tensor_name (const Onnx__TensorProto *proto)
{
  return proto->name ? proto->name : "";
}

gboolean
_owb_onnx_tensor_proto_shape (const Onnx__TensorProto *proto, int *rank, int64_t *dims, int64_t *nelems,
                              gsize *nbytes, GError **error)
{
  const char *name = tensor_name (proto);
  if (!proto->has_data_type || proto->data_type == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' has no element type", name);
      return FALSE;
    }
  OwbDataType dtype = proto->data_type;
  if (!owb_data_type_is_valid (proto->data_type)
      || (owb_data_type_size (dtype) == 0 && dtype != OWB_TYPE_STRING && !owb_data_type_packed_bits (dtype)))
    {
      const char *type_name = onnx_type_name (proto->data_type);
      if (type_name)
        g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "tensor '%s' has element type %s, which is not supported",
                     name, type_name);
      else
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' has unknown element type %d", name,
                     proto->data_type);
      return FALSE;
    }
  if (proto->n_dims > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' has rank %zu, more than the %d supported",
                   name, proto->n_dims, OWB_MAX_RANK);
      return FALSE;
    }
  for (gsize i = 0; i < proto->n_dims; i++)
    if (proto->dims[i] < 0)
      {
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                     "tensor '%s' has a negative dimension (%" G_GINT64_FORMAT " at axis %zu)", name,
                     proto->dims[i], i);
        return FALSE;
      }
  int64_t count = 1;
  for (gsize i = 0; i < proto->n_dims; i++)
    {
      int64_t d = proto->dims[i];
      if (d != 0 && count > G_MAXINT64 / d)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                       "tensor '%s': the element count of its dimensions overflows 64 bits", name);
          return FALSE;
        }
      count *= d;
    }
  for (gsize i = 0; i < proto->n_dims; i++)
    dims[i] = proto->dims[i];
  gsize size = owb_data_type_size (dtype);
  int bits = owb_data_type_packed_bits (dtype);
  if (dtype == OWB_TYPE_STRING || bits)
    size = MAX (size, sizeof (char *)); /* a bound for the in-memory size */
  if (count != 0 && (guint64) count > G_MAXSIZE / size)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' is too large (%" G_GINT64_FORMAT
                   " elements)", name, count);
      return FALSE;
    }
  *rank = (int) proto->n_dims;
  *nelems = count;
  *nbytes = bits ? ((gsize) count * bits + 7) / 8 : (gsize) count * size;
  return TRUE;
}

static char *
shape_text (int rank, const int64_t *dims)
{
  GString *s = g_string_new ("[");
  for (int i = 0; i < rank; i++)
    g_string_append_printf (s, i ? ",%" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, dims[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static void
set_size_error (GError **error, const char *name, const char *where, guint64 have, int rank, const int64_t *dims,
                OwbDataType dtype, guint64 need, const char *unit)
{
  g_autofree char *shape = shape_text (rank, dims);
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
               "tensor '%s' has %" G_GUINT64_FORMAT " %s in %s, but its shape %s of %s needs %" G_GUINT64_FORMAT, name,
               have, unit, where, shape, owb_data_type_name (dtype), need);
}

/* Copies `count` values of a typed repeated field into dest, converting to the tensor's type. */
#define COPY_VALUES(dest_type, src)                                                                                   \
  G_STMT_START                                                                                                        \
  {                                                                                                                   \
    dest_type *d_ = (dest_type *) tensor->data;                                                                       \
    for (gsize i_ = 0; i_ < count; i_++)                                                                              \
      d_[i_] = (dest_type) (src)[i_];                                                                                 \
  }                                                                                                                   \
  G_STMT_END

/* raw_data left out of the skeleton: where it lies in the original data, and whether the pages
 * it occupies may be released once copied (only when the mapping is the loader's own). */
typedef struct {
  const guint8 *data;
  gsize len;
  gboolean release;
  /* Bytes from `unread` on were not read with the file (a hole): they are read from fd at
   * file_offset + unread. unread == len when all of it is in `data`. */
  gsize unread;
  int fd;
  gsize file_offset;
  const char *path;
} RawSource;

/* Copies (or unpacks, for sub-byte types) a payload in chunks, releasing its pages as it goes;
 * its unread part is read from the file straight into the tensor. */
static gboolean
copy_payload (OwbTensor *tensor, const RawSource *raw, int64_t nelems, GError **error)
{
  const guint8 *done = raw->data;
  guint8 *dest = tensor->data;
  int bits = owb_data_type_packed_bits (tensor->dtype);
  /* Packed elements are unpacked from the buffer: their hole (rare) is read into it first. */
  if (bits && raw->unread < raw->len
      && !_owb_pread_exact (raw->fd, (guint8 *) raw->data + raw->unread, raw->len - raw->unread,
                            raw->file_offset + raw->unread, "model", raw->path, error))
    return FALSE;
  if (bits)
    {
      /* Chunks of a multiple of 8 elements start on a byte boundary of the packed stream. */
      for (int64_t e = 0; e < nelems; e += (int64_t) PAYLOAD_CHUNK)
        {
          int64_t m = MIN ((int64_t) PAYLOAD_CHUNK, nelems - e);
          const guint8 *src = raw->data + (gsize) e / 8 * bits;
          unpack_bits (dest + e, src, m, tensor->dtype);
          if (raw->release)
            release_pages (&done, e + m == nelems ? raw->data + raw->len : src + (gsize) m / 8 * bits);
        }
      return TRUE;
    }
  for (gsize off = 0; off < raw->unread; off += PAYLOAD_CHUNK)
    {
      gsize m = MIN (PAYLOAD_CHUNK, raw->unread - off);
      memcpy (dest + off, raw->data + off, m);
      if (raw->release)
        release_pages (&done, raw->data + off + m);
    }
  return raw->unread == raw->len
         || _owb_pread_exact (raw->fd, dest + raw->unread, raw->len - raw->unread, raw->file_offset + raw->unread,
                              "model", raw->path, error);
}

/* With `raw`, the data is that payload instead of the message's raw_data, and is copied. */
static OwbTensor *
tensor_from_proto (Onnx__TensorProto *proto, gboolean steal, const RawSource *raw, GError **error)
{
  const char *name = tensor_name (proto);
  int rank;
  int64_t dims[OWB_MAX_RANK];
  int64_t nelems;
  gsize nbytes;

  if (proto->has_data_location && proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s' keeps its data in an external file, which is not allowed here", name);
      return NULL;
    }
  if (proto->segment)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' is segmented, which is not supported",
                   name);
      return NULL;
    }
  if (!_owb_onnx_tensor_proto_shape (proto, &rank, dims, &nelems, &nbytes, error))
    return NULL;
  OwbDataType dtype = proto->data_type;

  if (dtype == OWB_TYPE_STRING)
    {
      if (proto->n_string_data != (guint64) nelems)
        {
          set_size_error (error, name, "string_data", proto->n_string_data, rank, dims, dtype, nelems, "values");
          return NULL;
        }
      OwbTensor *tensor = owb_tensor_new (dtype, rank, dims, error);
      if (!tensor)
        return NULL;
      char **strings = tensor->data;
      for (gsize i = 0; i < proto->n_string_data; i++)
        {
          const ProtobufCBinaryData *b = &proto->string_data[i];
          g_free (strings[i]);
          strings[i] = g_malloc (b->len + 1);
          if (b->len)
            memcpy (strings[i], b->data, b->len);
          strings[i][b->len] = '\0';
        }
      return tensor;
    }

  if (proto->has_raw_data || raw)
    {
      gsize raw_len = raw ? raw->len : proto->raw_data.len;
      if (raw_len != nbytes)
        {
          set_size_error (error, name, "raw_data", raw_len, rank, dims, dtype, nbytes, "bytes");
          return NULL;
        }
      if (nbytes == 0)
        return owb_tensor_new (dtype, rank, dims, error);
      OwbTensor *tensor;
      if (raw)
        {
          tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
          if (!tensor)
            return NULL;
          if (!copy_payload (tensor, raw, nelems, error))
            {
              owb_tensor_unref (tensor);
              return NULL;
            }
        }
      else if (owb_data_type_packed_bits (dtype))
        {
          tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
          if (tensor)
            unpack_bits (tensor->data, proto->raw_data.data, nelems, dtype);
          return tensor;
        }
      else if (steal)
        {
          void *data = proto->raw_data.data;
          proto->raw_data.data = NULL;
          proto->raw_data.len = 0;
          proto->has_raw_data = FALSE;
          tensor = owb_tensor_new_wrap (dtype, rank, dims, data, g_free, data, error);
          if (!tensor)
            {
              g_free (data);
              return NULL;
            }
        }
      else
        {
          tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
          if (!tensor)
            return NULL;
          memcpy (tensor->data, proto->raw_data.data, nbytes);
        }
#if G_BYTE_ORDER == G_BIG_ENDIAN
      if (!owb_data_type_packed_bits (dtype))
        swap_in_place (tensor->data, nbytes, _owb_onnx_component_size (dtype));
#endif
      return tensor;
    }

  /* Typed fields: which one holds the values, and how many it must have. */
  gsize have;
  const char *field;
  guint64 need = (guint64) nelems;
  switch (dtype)
    {
    case OWB_TYPE_FLOAT:
    case OWB_TYPE_COMPLEX64:
      have = proto->n_float_data;
      field = "float_data";
      break;
    case OWB_TYPE_DOUBLE:
    case OWB_TYPE_COMPLEX128:
      have = proto->n_double_data;
      field = "double_data";
      break;
    case OWB_TYPE_INT64:
      have = proto->n_int64_data;
      field = "int64_data";
      break;
    case OWB_TYPE_UINT32:
    case OWB_TYPE_UINT64:
      have = proto->n_uint64_data;
      field = "uint64_data";
      break;
    default:
      have = proto->n_int32_data;
      field = "int32_data";
      break;
    }
  if (dtype == OWB_TYPE_COMPLEX64 || dtype == OWB_TYPE_COMPLEX128)
    need *= 2;
  /* 4-bit and 2-bit types pack two or four elements into each int32_data entry. */
  int bits = owb_data_type_packed_bits (dtype);
  if (bits == 4 || bits == 2)
    need = ((guint64) nelems * bits + 7) / 8;
  if (have != need)
    {
      if (have == 0)
        {
          g_autofree char *shape = shape_text (rank, dims);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                       "tensor '%s' has no data, but its shape %s of %s needs %" G_GINT64_FORMAT " values", name, shape,
                       owb_data_type_name (dtype), nelems);
        }
      else
        set_size_error (error, name, field, have, rank, dims, dtype, need, "values");
      return NULL;
    }
  OwbTensor *tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
  if (!tensor || nelems == 0)
    return tensor;
  gsize count = have;
  switch (dtype)
    {
    case OWB_TYPE_FLOAT:
    case OWB_TYPE_COMPLEX64:
      memcpy (tensor->data, proto->float_data, count * sizeof (float));
      break;
    case OWB_TYPE_DOUBLE:
    case OWB_TYPE_COMPLEX128:
      memcpy (tensor->data, proto->double_data, count * sizeof (double));
      break;
    case OWB_TYPE_INT64:
      memcpy (tensor->data, proto->int64_data, count * sizeof (int64_t));
      break;
    case OWB_TYPE_UINT32:
      COPY_VALUES (guint32, proto->uint64_data);
      break;
    case OWB_TYPE_UINT64:
      memcpy (tensor->data, proto->uint64_data, count * sizeof (guint64));
      break;
    case OWB_TYPE_INT32:
      memcpy (tensor->data, proto->int32_data, count * sizeof (gint32));
      break;
    case OWB_TYPE_BOOL:
      {
        guint8 *d = tensor->data;
        for (gsize i = 0; i < count; i++)
          d[i] = proto->int32_data[i] != 0;
        break;
      }
    default:
      if (bits == 4 || bits == 2)
        {
          g_autofree guint8 *packed = g_new (guint8, count);
          for (gsize i = 0; i < count; i++)
            packed[i] = (guint8) proto->int32_data[i];
          unpack_bits (tensor->data, packed, nelems, dtype);
          break;
        }
      if (bits == 6)
        {
          COPY_VALUES (guint8, proto->int32_data);
          for (gsize i = 0; i < count; i++)
            ((guint8 *) tensor->data)[i] &= 0x3f;
          break;
        }
      switch (owb_data_type_size (dtype))
        {
        case 1:
          COPY_VALUES (guint8, proto->int32_data);
          break;
        case 2:
          COPY_VALUES (guint16, proto->int32_data);
          break;
        default:
          owb_tensor_unref (tensor);
          g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "tensor '%s': element type %s is not supported in int32_data",
                       name, owb_data_type_name (dtype));
          return NULL;
        }
      break;
    }
  return tensor;
}

OwbTensor *
_owb_onnx_tensor_from_proto (Onnx__TensorProto *proto, gboolean steal, GError **error)
{
  return tensor_from_proto (proto, steal, NULL, error);
}

OwbTensor *
_owb_onnx_sparse_to_dense (Onnx__SparseTensorProto *sparse, GError **error)
{
  if (!sparse->values)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "sparse tensor without values");
      return NULL;
    }
  const char *name = tensor_name (sparse->values);
  if (sparse->n_dims > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "sparse tensor '%s' has rank %zu, more than the %d supported", name, sparse->n_dims, OWB_MAX_RANK);
      return NULL;
    }
  int rank = (int) sparse->n_dims;
  int64_t dims[OWB_MAX_RANK];
  int64_t count;
  for (int i = 0; i < rank; i++)
    dims[i] = sparse->dims[i];
  g_autoptr (GError) shape_error = NULL;
  if (!owb_shape_count (rank, dims, &count, name, &shape_error))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "sparse tensor '%s': %s", name, shape_error->message);
      return NULL;
    }
  g_autoptr (OwbTensor) values = _owb_onnx_tensor_from_proto (sparse->values, FALSE, error);
  if (!values)
    return NULL;
  if (values->dtype == OWB_TYPE_STRING || owb_data_type_size (values->dtype) == 0 || values->rank != 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "sparse tensor '%s' must have 1-D numeric values", name);
      return NULL;
    }
  int64_t nnz = values->dims[0];
  g_autoptr (OwbTensor) indices = NULL;
  if (nnz > 0)
    {
      if (!sparse->indices)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "sparse tensor '%s' has values but no indices", name);
          return NULL;
        }
      indices = _owb_onnx_tensor_from_proto (sparse->indices, FALSE, error);
      if (!indices)
        return NULL;
      gboolean linear = indices->rank == 1 && indices->dims[0] == nnz;
      gboolean coords = indices->rank == 2 && indices->dims[0] == nnz && indices->dims[1] == rank;
      if (indices->dtype != OWB_TYPE_INT64 || !(linear || coords))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                       "sparse tensor '%s': indices must be int64 of shape [%" G_GINT64_FORMAT "] or [%" G_GINT64_FORMAT
                       ",%d]", name, nnz, nnz, rank);
          return NULL;
        }
    }
  OwbTensor *dense = owb_tensor_new (values->dtype, rank, dims, error);
  if (!dense)
    return NULL;
  gsize size = owb_data_type_size (values->dtype);
  const int64_t *idx = indices ? indices->data : NULL;
  for (int64_t k = 0; k < nnz; k++)
    {
      int64_t pos = 0;
      if (indices->rank == 1)
        pos = idx[k];
      else
        for (int d = 0; d < rank; d++)
          {
            int64_t c = idx[k * rank + d];
            if (c < 0 || c >= dims[d])
              {
                pos = -1;
                break;
              }
            pos = pos * dims[d] + c;
          }
      if (pos < 0 || pos >= count)
        {
          owb_tensor_unref (dense);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "sparse tensor '%s': index %" G_GINT64_FORMAT
                       " is out of range", name, k);
          return NULL;
        }
      memcpy ((guint8 *) dense->data + pos * size, (const guint8 *) values->data + k * size, size);
    }
  return dense;
}

/* Loading context */

typedef struct _Env Env;
typedef struct _Function Function;

typedef struct {
  OwbModel *model;
  const char *base_dir; /* NULL: no external data */
  char *base_real;      /* base_dir resolved, on first use */
  GHashTable *functions; /* key -> Function * */
  GHashTable *prefixes;  /* call prefixes in use */
  int unnamed_calls;
  guint64 expanded_nodes; /* created by function expansion so far (at most expansion_budget) */
  guint64 expansion_budget; /* see EXPANSION_FLOOR */
  /* Payloads left out of the skeleton, by initializer index of the main graph. */
  const Onnx__GraphProto *main_graph;
  const guint8 *data; /* the original wire data */
  const Payload *payloads;
  guint n_payloads;
  const ModelFile *file; /* where the data came from, when it is the loader's own read */
  GCancellable *cancellable;
} Ctx;

struct _Function {
  Onnx__FunctionProto *proto;
  OwbNode *defaults; /* attribute_proto converted, on first use */
  /* Nodes one call expands to, counted before anything is expanded (see expanded_size). */
  guint64 expanded_size;
  int size_state; /* 0 not counted, 1 being counted (a cycle if met again), 2 counted */
  /* Nodes of the body that are not calls of functions (each call creates these), on first use. */
  gsize own_nodes;
  gboolean own_nodes_known;
};

/* Renaming inside an expanded function call. */
struct _Env {
  GHashTable *names;    /* formal name -> actual name */
  char *prefix;         /* for all other names */
  const OwbNode *caller; /* attributes that ref_attr_name refers to */
  Function *function;
  int depth;
};

static void
function_free (gpointer p)
{
  Function *f = p;
  owb_node_free (f->defaults);
  g_free (f);
}

static char *
function_key (const char *domain, const char *name, const char *overload)
{
  if (domain == NULL || strcmp (domain, "ai.onnx") == 0)
    domain = "";
  return g_strdup_printf ("%s\n%s\n%s", domain, name ? name : "", overload ? overload : "");
}

static char *
rename_value (const Env *env, const char *name)
{
  if (name == NULL)
    return g_strdup ("");
  if (env == NULL || name[0] == '\0')
    return g_strdup (name);
  const char *actual = g_hash_table_lookup (env->names, name);
  if (actual)
    return g_strdup (actual);
  return g_strconcat (env->prefix, name, NULL);
}

/* External data */

static gboolean
location_is_confined (const char *location)
{
  if (location[0] == '\0' || g_path_is_absolute (location) || location[0] == '/' || location[0] == '\\')
    return FALSE;
  if (g_ascii_isalpha (location[0]) && location[1] == ':')
    return FALSE;
  /* No ".." component, with either separator. */
  for (const char *p = location; *p;)
    {
      gsize len = strcspn (p, "/\\");
      if (len == 2 && p[0] == '.' && p[1] == '.')
        return FALSE;
      p += len;
      if (*p)
        p++;
    }
  return TRUE;
}

static OwbMappedFile *
map_external_file (Ctx *ctx, const char *tensor, const char *location, GError **error)
{
  if (!location_is_confined (location))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s': external data location '%s' must be a relative path inside the model's folder "
                   "(absolute paths and '..' are refused)", tensor, location);
      return NULL;
    }
  if (ctx->base_real == NULL)
    {
      ctx->base_real = realpath (ctx->base_dir, NULL);
      if (ctx->base_real == NULL)
        {
          int err = errno;
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "tensor '%s': cannot resolve the model folder '%s': %s", tensor,
                       ctx->base_dir, g_strerror (err));
          return NULL;
        }
    }
  g_autofree char *full = g_build_filename (ctx->base_real, location, NULL);
  char *resolved = realpath (full, NULL);
  if (resolved == NULL)
    {
      int err = errno;
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "tensor '%s': cannot open external data file '%s': %s", tensor,
                   location, g_strerror (err));
      return NULL;
    }
  g_autofree char *path = g_strdup (resolved);
  free (resolved);
  gsize base_len = strlen (ctx->base_real);
  if (strcmp (path, ctx->base_real) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s': external data location '%s' is the model's folder, not a file", tensor, location);
      return NULL;
    }
  gboolean inside = strncmp (path, ctx->base_real, base_len) == 0
                    && (path[base_len] == '/' || (base_len == 1 && ctx->base_real[0] == '/'));
  if (!inside)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s': external data location '%s' resolves outside the model's folder (through a symbolic "
                   "link?); refused", tensor, location);
      return NULL;
    }
  for (guint i = 0; i < ctx->model->mappings->len; i++)
    {
      OwbMappedFile *mapped = g_ptr_array_index (ctx->model->mappings, i);
      if (strcmp (mapped->path, path) == 0)
        return mapped;
    }
  struct stat st;
  g_autofree char *what = g_strdup_printf ("external data file of tensor '%s'", tensor);
  int fd = _owb_open_regular_file (path, what, &st, error);
  if (fd < 0)
    return NULL;
  OwbMappedFile *mapped = g_new0 (OwbMappedFile, 1);
  mapped->fd = fd;
  mapped->size = (guint64) st.st_size;
  mapped->path = g_steal_pointer (&path);
  mapped->device = st.st_dev;
  mapped->inode = st.st_ino;
  g_ptr_array_add (ctx->model->mappings, mapped);
  return mapped;
}

static gboolean
parse_size (const char *tensor, const char *key, const char *text, guint64 *value, GError **error)
{
  g_autoptr (GError) parse_error = NULL;
  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, value, &parse_error))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s': external data %s '%s' is not a number",
                   tensor, key, text);
      return FALSE;
    }
  return TRUE;
}

static OwbTensor *
load_external (Ctx *ctx, Onnx__TensorProto *proto, GError **error)
{
  const char *name = tensor_name (proto);
  const char *location = NULL, *offset_text = NULL, *length_text = NULL;
  for (gsize i = 0; i < proto->n_external_data; i++)
    {
      const Onnx__StringStringEntryProto *e = proto->external_data[i];
      if (!e->key || !e->value)
        continue;
      if (strcmp (e->key, "location") == 0)
        location = e->value;
      else if (strcmp (e->key, "offset") == 0)
        offset_text = e->value;
      else if (strcmp (e->key, "length") == 0)
        length_text = e->value;
    }
  if (location == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "tensor '%s' has external data without a location",
                   name);
      return NULL;
    }
  if (ctx->base_dir == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s' keeps its data in external file '%s', but the model was not loaded from a folder",
                   name, location);
      return NULL;
    }
  int rank;
  int64_t dims[OWB_MAX_RANK];
  int64_t nelems;
  gsize nbytes;
  if (!_owb_onnx_tensor_proto_shape (proto, &rank, dims, &nelems, &nbytes, error))
    return NULL;
  OwbDataType dtype = proto->data_type;
  if (dtype == OWB_TYPE_STRING)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s': string tensors cannot keep their data in an external file", name);
      return NULL;
    }
  guint64 offset = 0, length = 0;
  if (offset_text && !parse_size (name, "offset", offset_text, &offset, error))
    return NULL;
  if (length_text && !parse_size (name, "length", length_text, &length, error))
    return NULL;
  OwbMappedFile *mapped = map_external_file (ctx, name, location, error);
  if (!mapped)
    return NULL;
  guint64 file_size = mapped->size;
  if (offset > file_size || (length_text && length > file_size - offset))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "tensor '%s': external data (offset %" G_GUINT64_FORMAT ", length %" G_GUINT64_FORMAT
                   ") lies outside '%s' (%" G_GUINT64_FORMAT " bytes)", name, offset, length, location, file_size);
      return NULL;
    }
  if (!length_text)
    length = file_size - offset;
  if (length != nbytes)
    {
      set_size_error (error, name, location, length, rank, dims, dtype, nbytes, "bytes of external data");
      return NULL;
    }
  if (nbytes == 0)
    return owb_tensor_new (dtype, rank, dims, error);
  /* Copied out with pread: a mapping would raise SIGBUS in a kernel if the file shrank later. */
  OwbTensor *tensor = owb_tensor_new_uninit (dtype, rank, dims, error);
  if (!tensor)
    return NULL;
  if (owb_data_type_packed_bits (dtype))
    {
      guint8 *packed = g_try_malloc (nbytes);
      if (!packed)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "tensor '%s': cannot allocate %" G_GSIZE_FORMAT " bytes",
                       name, nbytes);
          owb_tensor_unref (tensor);
          return NULL;
        }
      gboolean ok = _owb_pread_exact (mapped->fd, packed, nbytes, offset, "external data file", location, error);
      if (ok)
        unpack_bits (tensor->data, packed, nelems, dtype);
      g_free (packed);
      if (!ok)
        {
          owb_tensor_unref (tensor);
          return NULL;
        }
      return tensor;
    }
  if (!_owb_pread_exact (mapped->fd, tensor->data, nbytes, offset, "external data file", location, error))
    {
      g_prefix_error (error, "tensor '%s': ", name);
      owb_tensor_unref (tensor);
      return NULL;
    }
#if G_BYTE_ORDER == G_BIG_ENDIAN
  swap_in_place (tensor->data, nbytes, _owb_onnx_component_size (dtype));
#endif
  return tensor;
}

/* Inside a function body (env set) nothing is stolen: the body is expanded once per call. */
static OwbTensor *
convert_tensor (Ctx *ctx, const Env *env, Onnx__TensorProto *proto, GError **error)
{
  if (proto->has_data_location && proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return load_external (ctx, proto, error);
  return _owb_onnx_tensor_from_proto (proto, env == NULL, error);
}

/* Types */

static gboolean
elem_type_from_proto (int elem_type, const char *what, OwbDataType *dtype, GError **error)
{
  if (elem_type != 0 && !owb_data_type_is_valid (elem_type))
    {
      const char *name = onnx_type_name (elem_type);
      if (name)
        g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "value '%s' has element type %s, which is not supported", what,
                     name);
      else
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "value '%s' has unknown element type %d", what,
                     elem_type);
      return FALSE;
    }
  *dtype = elem_type;
  return TRUE;
}

static gboolean
shape_from_proto (const Onnx__TensorShapeProto *shape, const char *what, OwbValueType *type, GError **error)
{
  if (shape == NULL)
    {
      type->rank = -1;
      return TRUE;
    }
  if (shape->n_dim > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "value '%s' has rank %zu, more than the %d supported",
                   what, shape->n_dim, OWB_MAX_RANK);
      return FALSE;
    }
  type->rank = (int) shape->n_dim;
  for (gsize i = 0; i < shape->n_dim; i++)
    {
      const Onnx__TensorShapeProto__Dimension *dim = shape->dim[i];
      type->dims[i] = OWB_DIM_UNKNOWN;
      if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        {
          if (dim->dim_value < 0)
            {
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                           "value '%s' has a negative dimension (%" G_GINT64_FORMAT " at axis %zu)", what,
                           dim->dim_value, i);
              return FALSE;
            }
          type->dims[i].value = dim->dim_value;
        }
      else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param
               && dim->dim_param[0])
        type->dims[i].param = g_intern_string (dim->dim_param);
    }
  return TRUE;
}

static gboolean
type_from_proto (const Onnx__TypeProto *tp, const char *what, OwbValueType *type, GError **error)
{
  owb_value_type_init_unknown (type);
  if (tp == NULL)
    return TRUE;
  const Onnx__TypeProto *inner_proto = NULL;
  switch (tp->value_case)
    {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
      type->kind = OWB_VALUE_TENSOR;
      return elem_type_from_proto (tp->tensor_type->elem_type, what, &type->dtype, error)
             && shape_from_proto (tp->tensor_type->shape, what, type, error);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
      type->kind = OWB_VALUE_SPARSE_TENSOR;
      return elem_type_from_proto (tp->sparse_tensor_type->elem_type, what, &type->dtype, error)
             && shape_from_proto (tp->sparse_tensor_type->shape, what, type, error);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
      type->kind = OWB_VALUE_SEQUENCE;
      inner_proto = tp->sequence_type->elem_type;
      break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
      type->kind = OWB_VALUE_OPTIONAL;
      inner_proto = tp->optional_type->elem_type;
      break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
      type->kind = OWB_VALUE_MAP;
      if (!elem_type_from_proto (tp->map_type->key_type, what, &type->key_dtype, error))
        return FALSE;
      inner_proto = tp->map_type->value_type;
      break;
    default:
      type->kind = OWB_VALUE_UNKNOWN_KIND;
      return TRUE;
    }
  /* Containers describe their element (one level) through dtype/rank/dims and elem_kind. */
  type->elem_kind = OWB_VALUE_UNKNOWN_KIND;
  if (inner_proto)
    {
      OwbValueType inner;
      if (!type_from_proto (inner_proto, what, &inner, error))
        return FALSE;
      type->elem_kind = inner.kind;
      type->dtype = inner.dtype;
      type->rank = inner.rank;
      memcpy (type->dims, inner.dims, sizeof type->dims);
    }
  return TRUE;
}

static OwbValueInfo *
convert_value_info (const Env *env, const Onnx__ValueInfoProto *vp, GError **error)
{
  g_autofree char *name = rename_value (env, vp->name);
  OwbValueType type;
  if (!type_from_proto (vp->type, name, &type, error))
    return NULL;
  OwbValueInfo *info = owb_value_info_new (name, vp->type ? &type : NULL);
  info->doc_string = g_strdup (vp->doc_string);
  return info;
}

/* Graphs, nodes, attributes */

static OwbGraph *convert_graph (Ctx *ctx, const Env *env, Onnx__GraphProto *gp, OwbGraph *parent, int depth,
                                GError **error);
static gboolean convert_nodes (Ctx *ctx, const Env *env, Onnx__NodeProto **nodes, gsize n_nodes, OwbGraph *graph,
                               int depth, GError **error);

static char *
bytes_dup (const ProtobufCBinaryData *b)
{
  char *s = g_malloc (b->len + 1);
  if (b->len)
    memcpy (s, b->data, b->len);
  s[b->len] = '\0';
  return s;
}

static OwbAttributeType
guess_attribute_type (const Onnx__AttributeProto *ap)
{
  /* IR version 1 had no type field: the value field present decides. */
  if (ap->has_f)
    return OWB_ATTR_FLOAT;
  if (ap->has_i)
    return OWB_ATTR_INT;
  if (ap->has_s)
    return OWB_ATTR_STRING;
  if (ap->t)
    return OWB_ATTR_TENSOR;
  if (ap->g)
    return OWB_ATTR_GRAPH;
  if (ap->sparse_tensor)
    return OWB_ATTR_SPARSE_TENSOR;
  if (ap->tp)
    return OWB_ATTR_TYPE_PROTO;
  if (ap->n_floats)
    return OWB_ATTR_FLOATS;
  if (ap->n_ints)
    return OWB_ATTR_INTS;
  if (ap->n_strings)
    return OWB_ATTR_STRINGS;
  if (ap->n_tensors)
    return OWB_ATTR_TENSORS;
  if (ap->n_graphs)
    return OWB_ATTR_GRAPHS;
  if (ap->n_sparse_tensors)
    return OWB_ATTR_SPARSE_TENSORS;
  return OWB_ATTR_UNDEFINED;
}

static const char *
attribute_type_name (int type)
{
  static const char *names[] = { "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
                                 "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
                                 "TYPE_PROTOS" };
  return type >= 0 && type < (int) G_N_ELEMENTS (names) ? names[type] : "unknown";
}

/* Fills attr (zeroed) from ap. Returns FALSE with an error; *skip is set for a reference to
 * an attribute the function call does not give (the attribute is then absent). */
static gboolean
convert_attribute (Ctx *ctx, const Env *env, Onnx__AttributeProto *ap, OwbGraph *owner, int depth,
                   OwbAttribute *attr, gboolean *skip, GError **error)
{
  *skip = FALSE;
  if (ap->name == NULL || ap->name[0] == '\0')
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "an attribute has no name");
      return FALSE;
    }
  OwbAttributeType type = ap->has_type ? (OwbAttributeType) ap->type : guess_attribute_type (ap);

  if (ap->ref_attr_name && ap->ref_attr_name[0] && env)
    {
      /* Inside an expanded function: take the caller's value, else the function's default. */
      const OwbAttribute *value = owb_node_get_attribute (env->caller, ap->ref_attr_name);
      if (!value && env->function->defaults)
        value = owb_node_get_attribute (env->function->defaults, ap->ref_attr_name);
      if (!value)
        {
          *skip = TRUE;
          return TRUE;
        }
      owb_attribute_copy (attr, value);
      g_free (attr->name);
      attr->name = g_strdup (ap->name);
      return TRUE;
    }

  attr->name = g_strdup (ap->name);
  attr->type = type;
  attr->doc_string = g_strdup (ap->doc_string);
  owb_value_type_init_unknown (&attr->tp);
  if (ap->ref_attr_name && ap->ref_attr_name[0])
    {
      attr->ref_attr_name = g_strdup (ap->ref_attr_name);
      return TRUE;
    }

  gsize n = 0;
  switch (type)
    {
    case OWB_ATTR_FLOATS:
      n = ap->n_floats;
      break;
    case OWB_ATTR_INTS:
      n = ap->n_ints;
      break;
    case OWB_ATTR_STRINGS:
      n = ap->n_strings;
      break;
    case OWB_ATTR_TENSORS:
      n = ap->n_tensors;
      break;
    case OWB_ATTR_GRAPHS:
      n = ap->n_graphs;
      break;
    case OWB_ATTR_SPARSE_TENSORS:
      n = ap->n_sparse_tensors;
      break;
    default:
      break;
    }
  if (n > G_MAXINT - 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s' has too many values", ap->name);
      return FALSE;
    }
  attr->n = (int) n;

  switch (type)
    {
    case OWB_ATTR_FLOAT:
      attr->f = ap->f;
      break;
    case OWB_ATTR_INT:
      attr->i = ap->i;
      break;
    case OWB_ATTR_STRING:
      attr->s = bytes_dup (&ap->s);
      attr->s_len = ap->s.len;
      break;
    case OWB_ATTR_TENSOR:
      if (!ap->t)
        goto missing;
      if (!(attr->t = convert_tensor (ctx, env, ap->t, error)))
        goto failed;
      break;
    case OWB_ATTR_SPARSE_TENSOR:
      if (!ap->sparse_tensor)
        goto missing;
      if (!(attr->t = _owb_onnx_sparse_to_dense (ap->sparse_tensor, error)))
        goto failed;
      break;
    case OWB_ATTR_GRAPH:
      if (!ap->g)
        goto missing;
      if (!(attr->g = convert_graph (ctx, env, ap->g, owner, depth + 1, error)))
        goto failed;
      break;
    case OWB_ATTR_TYPE_PROTO:
      if (!ap->tp)
        goto missing;
      if (!type_from_proto (ap->tp, ap->name, &attr->tp, error))
        goto failed;
      break;
    case OWB_ATTR_FLOATS:
      attr->floats = g_new (float, MAX (n, 1));
      if (n)
        memcpy (attr->floats, ap->floats, n * sizeof (float));
      break;
    case OWB_ATTR_INTS:
      attr->ints = g_new (int64_t, MAX (n, 1));
      if (n)
        memcpy (attr->ints, ap->ints, n * sizeof (int64_t));
      break;
    case OWB_ATTR_STRINGS:
      attr->strings = g_new0 (char *, n + 1);
      for (gsize i = 0; i < n; i++)
        attr->strings[i] = bytes_dup (&ap->strings[i]);
      break;
    case OWB_ATTR_TENSORS:
    case OWB_ATTR_SPARSE_TENSORS:
      attr->tensors = g_new0 (OwbTensor *, n + 1);
      for (gsize i = 0; i < n; i++)
        {
          attr->tensors[i] = type == OWB_ATTR_TENSORS ? convert_tensor (ctx, env, ap->tensors[i], error)
                                                      : _owb_onnx_sparse_to_dense (ap->sparse_tensors[i], error);
          if (!attr->tensors[i])
            goto failed;
        }
      break;
    case OWB_ATTR_GRAPHS:
      attr->graphs = g_new0 (OwbGraph *, n + 1);
      for (gsize i = 0; i < n; i++)
        if (!(attr->graphs[i] = convert_graph (ctx, env, ap->graphs[i], owner, depth + 1, error)))
          goto failed;
      break;
    case OWB_ATTR_TYPE_PROTOS:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s': type TYPE_PROTOS is not supported",
                   ap->name);
      return FALSE;
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s' has no valid type (%d)", ap->name,
                   (int) type);
      return FALSE;
    }
  return TRUE;

missing:
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "attribute '%s' of type %s has no value", ap->name,
               attribute_type_name (type));
  return FALSE;
failed:
  g_prefix_error (error, "attribute '%s': ", ap->name);
  return FALSE;
}

static gboolean
copy_names (const Env *env, char **src, gsize n, char ***dest, int *n_dest, GError **error)
{
  if (n > G_MAXINT - 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "too many inputs or outputs (%zu)", n);
      return FALSE;
    }
  *dest = g_new (char *, n + 1);
  for (gsize i = 0; i < n; i++)
    (*dest)[i] = rename_value (env, src[i]);
  (*dest)[n] = NULL;
  *n_dest = (int) n;
  return TRUE;
}

static OwbNode *
convert_node (Ctx *ctx, const Env *env, Onnx__NodeProto *np, OwbGraph *graph, int depth, GError **error)
{
  g_autofree char *name = NULL;
  if (env)
    name = g_strconcat (env->prefix, np->name && np->name[0] ? np->name : (np->op_type ? np->op_type : "node"), NULL);
  else
    name = g_strdup (np->name);
  g_autoptr (OwbNode) node = owb_node_new (np->op_type, np->domain, name);
  /* Duplicate attribute names are found through a set where a node has many attributes (a search
   * per attribute made a node of 100,000 attributes take seconds). Freed before the node. */
  g_autoptr (GHashTable) seen = np->n_attribute > 16 ? g_hash_table_new (g_str_hash, g_str_equal) : NULL;
  node->doc_string = g_strdup (np->doc_string);
  node->graph = graph;
  if (!copy_names (env, np->input, np->n_input, &node->inputs, &node->n_inputs, error)
      || !copy_names (env, np->output, np->n_output, &node->outputs, &node->n_outputs, error))
    goto failed;
  if (np->op_type == NULL || np->op_type[0] == '\0')
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "the node has no op_type");
      goto failed;
    }
  node->attributes = g_new0 (OwbAttribute, MAX (np->n_attribute, 1));
  for (gsize i = 0; i < np->n_attribute; i++)
    {
      gboolean skip;
      OwbAttribute *attr = &node->attributes[node->n_attributes];
      if (!convert_attribute (ctx, env, np->attribute[i], graph, depth, attr, &skip, error))
        {
          owb_attribute_clear (attr);
          goto failed;
        }
      if (skip)
        continue;
      if (seen ? !g_hash_table_add (seen, attr->name) : owb_node_get_attribute (node, attr->name) != NULL)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "two attributes are named '%s'", attr->name);
          owb_attribute_clear (attr);
          goto failed;
        }
      node->n_attributes++;
    }
  return g_steal_pointer (&node);

failed:
  {
    g_autofree char *what = owb_node_describe (node);
    g_prefix_error (error, "%s: ", what);
  }
  return NULL;
}

static Function *
find_function (Ctx *ctx, const Onnx__NodeProto *np)
{
  if (ctx->functions == NULL || g_hash_table_size (ctx->functions) == 0)
    return NULL;
  g_autofree char *key = function_key (np->domain, np->op_type, np->overload);
  return g_hash_table_lookup (ctx->functions, key);
}

/* Nodes one call of the function expands to (calls inside it expanded), saturating past
 * MAX_EXPANDED_NODES (the most any budget allows); G_MAXUINT64 when the function calls itself. Memoised, so the count is
 * linear in the functions' sizes even when the expansion is exponential. */
static guint64
expanded_size (Ctx *ctx, Function *function)
{
  if (function->size_state == 2)
    return function->expanded_size;
  if (function->size_state == 1)
    return G_MAXUINT64;
  function->size_state = 1;
  guint64 total = 0;
  Onnx__FunctionProto *fp = function->proto;
  for (gsize i = 0; i < fp->n_node && total <= MAX_EXPANDED_NODES; i++)
    {
      Function *callee = find_function (ctx, fp->node[i]);
      guint64 n = callee ? expanded_size (ctx, callee) : 1;
      if (n == G_MAXUINT64)
        {
          total = G_MAXUINT64;
          break;
        }
      total += MIN (n, (guint64) MAX_EXPANDED_NODES + 1);
    }
  function->expanded_size = total;
  function->size_state = 2;
  return total;
}

/* Replaces a call of a model-local function by a copy of its body: formal inputs and outputs
 * become the call's names, every other name is prefixed with a name unique to the call, and
 * attribute references take the call's attribute values. */
static gboolean
expand_call (Ctx *ctx, const Env *env, Onnx__NodeProto *np, Function *function, OwbGraph *graph, int depth,
             GError **error)
{
  int call_depth = env ? env->depth + 1 : 1;
  Onnx__FunctionProto *fp = function->proto;
  if (call_depth > MAX_FUNCTION_DEPTH)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "function '%s' is recursive, or calls are nested deeper than %d", fp->name, MAX_FUNCTION_DEPTH);
      return FALSE;
    }
  if (call_depth == 1)
    {
      /* The whole expansion of this call, known before any of it is built. */
      guint64 size = expanded_size (ctx, function);
      if (size == G_MAXUINT64)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                       "function '%s' is recursive (it calls itself, directly or through other functions)",
                       fp->name);
          return FALSE;
        }
      if (size > ctx->expansion_budget || ctx->expanded_nodes + size > ctx->expansion_budget)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                       "expanding model-local functions would create more than %" G_GUINT64_FORMAT " nodes, the "
                       "budget of a model this size (a call of function '%s' alone expands to %s%" G_GUINT64_FORMAT
                       ")", ctx->expansion_budget, fp->name, size > MAX_EXPANDED_NODES ? "more than " : "",
                       MIN (size, (guint64) MAX_EXPANDED_NODES));
          return FALSE;
        }
    }
  if (function->defaults == NULL)
    {
      /* The body's nodes now run in the model: the opsets it imports must be known there. */
      for (gsize k = 0; k < fp->n_opset_import; k++)
        if (owb_model_get_opset (ctx->model, fp->opset_import[k]->domain) < 0)
          owb_model_set_opset (ctx->model, fp->opset_import[k]->domain, fp->opset_import[k]->version);
      function->defaults = owb_node_new (fp->name, fp->domain, fp->name);
      function->defaults->attributes = g_new0 (OwbAttribute, MAX (fp->n_attribute_proto, 1));
      for (gsize i = 0; i < fp->n_attribute_proto; i++)
        {
          gboolean skip;
          OwbAttribute *attr = &function->defaults->attributes[function->defaults->n_attributes];
          if (!convert_attribute (ctx, NULL, fp->attribute_proto[i], graph, depth, attr, &skip, error))
            {
              owb_attribute_clear (attr);
              g_prefix_error (error, "function '%s': ", fp->name);
              return FALSE;
            }
          function->defaults->n_attributes++;
        }
    }
  /* The call node itself, converted in the caller's scope (its names and attribute references). */
  g_autoptr (OwbNode) call = convert_node (ctx, env, np, graph, depth, error);
  if (!call)
    return FALSE;
  if (np->n_input > fp->n_input || np->n_output > fp->n_output)
    {
      g_autofree char *what = owb_node_describe (call);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "%s: calls function '%s' with %zu inputs and %zu outputs, but it has %zu and %zu", what, fp->name,
                   np->n_input, np->n_output, fp->n_input, fp->n_output);
      return FALSE;
    }

  g_autofree char *base = call->name[0] ? g_strdup (call->name)
                                        : g_strdup_printf ("%s_%d", fp->name ? fp->name : "call", ++ctx->unnamed_calls);
  char *prefix = g_strconcat (base, "/", NULL);
  for (int k = 2; g_hash_table_contains (ctx->prefixes, prefix); k++)
    {
      g_free (prefix);
      prefix = g_strdup_printf ("%s_%d/", base, k);
    }
  g_hash_table_add (ctx->prefixes, prefix);

  Env inner = { 0 };
  inner.names = g_hash_table_new (g_str_hash, g_str_equal);
  inner.prefix = prefix;
  inner.caller = call;
  inner.function = function;
  inner.depth = call_depth;
  for (gsize i = 0; i < fp->n_input; i++)
    if (fp->input[i] && fp->input[i][0])
      g_hash_table_insert (inner.names, fp->input[i], (gpointer) (i < (gsize) call->n_inputs ? call->inputs[i] : ""));
  for (gsize i = 0; i < fp->n_output; i++)
    if (fp->output[i] && fp->output[i][0] && i < (gsize) call->n_outputs && call->outputs[i][0])
      g_hash_table_insert (inner.names, fp->output[i], call->outputs[i]);

  /* Counted before the body is converted, so that the budget stops an expansion before it costs.
   * Calls of functions are not counted: they create only what their own bodies do. */
  if (!function->own_nodes_known)
    {
      for (gsize i = 0; i < fp->n_node; i++)
        if (!find_function (ctx, fp->node[i]))
          function->own_nodes++;
      function->own_nodes_known = TRUE;
    }
  ctx->expanded_nodes += function->own_nodes;
  if (ctx->expanded_nodes > ctx->expansion_budget)
    {
      g_hash_table_unref (inner.names);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "expanding model-local functions would create more than %" G_GUINT64_FORMAT " nodes, the "
                   "budget of a model this size (at function '%s', %d calls deep)",
                   ctx->expansion_budget, fp->name, call_depth);
      if (call_depth > 1)
        return FALSE;
      g_prefix_error (error, "in function '%s' called by '%s': ", fp->name, base);
      return FALSE;
    }
  gboolean ok = convert_nodes (ctx, &inner, fp->node, fp->n_node, graph, depth, error);
  g_hash_table_unref (inner.names);
  /* Only the outermost call names itself: a chain of 32 nested calls would make a 5 KB line. */
  if (!ok && call_depth == 1)
    g_prefix_error (error, "in function '%s' called by '%s': ", fp->name, base);
  return ok;
}

static gboolean
convert_nodes (Ctx *ctx, const Env *env, Onnx__NodeProto **nodes, gsize n_nodes, OwbGraph *graph, int depth,
               GError **error)
{
  for (gsize i = 0; i < n_nodes; i++)
    {
      Function *function = find_function (ctx, nodes[i]);
      if (function)
        {
          if (!expand_call (ctx, env, nodes[i], function, graph, depth, error))
            return FALSE;
          continue;
        }
      OwbNode *node = convert_node (ctx, env, nodes[i], graph, depth, error);
      if (!node)
        return FALSE;
      owb_graph_add_node (graph, node);
    }
  return TRUE;
}

static gboolean
add_value_infos (const Env *env, Onnx__ValueInfoProto **src, gsize n, GPtrArray *dest, GError **error)
{
  for (gsize i = 0; i < n; i++)
    {
      OwbValueInfo *info = convert_value_info (env, src[i], error);
      if (!info)
        return FALSE;
      g_ptr_array_add (dest, info);
    }
  return TRUE;
}

static gboolean
add_initializer (OwbGraph *graph, char *name, OwbTensor *tensor, GError **error)
{
  if (name[0] == '\0' || owb_graph_get_initializer (graph, name))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   name[0] ? "two initializers are named '%s'" : "an initializer has no name%s", name);
      owb_tensor_unref (tensor);
      return FALSE;
    }
  owb_graph_add_initializer (graph, name, tensor);
  return TRUE;
}

static OwbGraph *
convert_graph (Ctx *ctx, const Env *env, Onnx__GraphProto *gp, OwbGraph *parent, int depth, GError **error)
{
  if (depth > MAX_GRAPH_DEPTH)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "subgraphs are nested deeper than %d levels",
                   MAX_GRAPH_DEPTH);
      return NULL;
    }
  g_autoptr (OwbGraph) graph = owb_graph_new (gp->name);
  graph->doc_string = g_strdup (gp->doc_string);
  graph->parent = parent;
  graph->model = ctx->model;

  for (gsize i = 0; i < gp->n_initializer; i++)
    {
      Onnx__TensorProto *tp = gp->initializer[i];
      OwbTensor *tensor;
      if (!parent && g_cancellable_set_error_if_cancelled (ctx->cancellable, error))
        return NULL;
      if (gp == ctx->main_graph && i < ctx->n_payloads && ctx->payloads[i].length
          && !(tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
        {
          const Payload *pl = &ctx->payloads[i];
          RawSource raw = { ctx->data + pl->offset, pl->length, ctx->file != NULL, pl->unread,
                            ctx->file ? ctx->file->fd : -1, pl->offset, ctx->file ? ctx->file->path : NULL };
          tensor = tensor_from_proto (tp, FALSE, &raw, error);
        }
      else
        tensor = convert_tensor (ctx, env, tp, error);
      g_autofree char *name = rename_value (env, gp->initializer[i]->name);
      if (!tensor || !add_initializer (graph, name, tensor, error))
        goto failed;
    }
  for (gsize i = 0; i < gp->n_sparse_initializer; i++)
    {
      Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
      OwbTensor *tensor = _owb_onnx_sparse_to_dense (sp, error);
      g_autofree char *name = rename_value (env, sp->values ? sp->values->name : NULL);
      if (!tensor || !add_initializer (graph, name, tensor, error))
        goto failed;
    }
  if (!add_value_infos (env, gp->input, gp->n_input, graph->inputs, error)
      || !add_value_infos (env, gp->output, gp->n_output, graph->outputs, error)
      || !add_value_infos (env, gp->value_info, gp->n_value_info, graph->value_infos, error)
      || !convert_nodes (ctx, env, gp->node, gp->n_node, graph, depth, error))
    goto failed;
  return g_steal_pointer (&graph);

failed:
  if (parent)
    g_prefix_error (error, "subgraph '%s': ", gp->name ? gp->name : "");
  return NULL;
}

static char *
normalized_domain (const char *domain)
{
  return g_strdup (domain == NULL || strcmp (domain, "ai.onnx") == 0 ? "" : domain);
}

/* `data` and `payloads`: the original wire data and what was left out of the skeleton mp was
 * unpacked from (NULL when mp comes from the original). */
static OwbModel *
convert_model (Onnx__ModelProto *mp, const char *base_dir, const guint8 *data, gsize size, const GArray *payloads,
               const ModelFile *file, GError **error)
{
  g_autoptr (OwbModel) model = owb_model_new ();
  Ctx ctx = { 0 };
  ctx.model = model;
  ctx.expansion_budget = MIN ((guint64) MAX_EXPANDED_NODES, EXPANSION_FLOOR + (guint64) size * EXPANSION_PER_BYTE);
  ctx.base_dir = base_dir;
  ctx.cancellable = file ? file->cancellable : NULL;
  if (payloads)
    {
      ctx.main_graph = mp->graph;
      ctx.data = data;
      ctx.payloads = (const Payload *) payloads->data;
      ctx.n_payloads = payloads->len;
      ctx.file = file;
    }

  model->ir_version = mp->ir_version;
  model->producer_name = g_strdup (mp->producer_name);
  model->producer_version = g_strdup (mp->producer_version);
  model->domain = g_strdup (mp->domain);
  model->model_version = mp->model_version;
  model->doc_string = g_strdup (mp->doc_string);
  model->base_dir = g_strdup (base_dir);
  for (gsize i = 0; i < mp->n_opset_import; i++)
    {
      OwbOpsetImport imp = { normalized_domain (mp->opset_import[i]->domain), mp->opset_import[i]->version };
      g_array_append_val (model->opset_imports, imp);
    }
  for (gsize i = 0; i < mp->n_metadata_props; i++)
    {
      OwbStringPair pair = { g_strdup (mp->metadata_props[i]->key ? mp->metadata_props[i]->key : ""),
                             g_strdup (mp->metadata_props[i]->value ? mp->metadata_props[i]->value : "") };
      g_array_append_val (model->metadata, pair);
    }

  ctx.functions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, function_free);
  ctx.prefixes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (gsize i = 0; i < mp->n_functions; i++)
    {
      Onnx__FunctionProto *fp = mp->functions[i];
      if (!fp->name || !fp->name[0])
        continue;
      Function *function = g_new0 (Function, 1);
      function->proto = fp;
      g_hash_table_replace (ctx.functions, function_key (fp->domain, fp->name, fp->overload), function);
    }

  model->graph = convert_graph (&ctx, NULL, mp->graph, NULL, 0, error);

  g_hash_table_unref (ctx.functions);
  g_hash_table_unref (ctx.prefixes);
  free (ctx.base_real);
  if (!model->graph)
    return NULL;
  return g_steal_pointer (&model);
}

/* Each hole must be the tail of a payload the skeleton leaves out (then that payload reads it from
 * the file); any other is read in now. Holes and payloads are both in file order. */
static gboolean
match_holes (const ModelFile *file, const guint8 *data, GArray *payloads, GError **error)
{
  if (!file->holes || file->holes->len == 0)
    return TRUE;
  g_autofree gboolean *keep = g_new0 (gboolean, file->holes->len);
  guint j = 0;
  for (guint i = 0; payloads && i < file->holes->len; i++)
    {
      const Hole *h = &g_array_index (file->holes, Hole, i);
      while (j < payloads->len
             && (g_array_index (payloads, Payload, j).length == 0
                 || g_array_index (payloads, Payload, j).offset + g_array_index (payloads, Payload, j).length < h->end))
        j++;
      if (j == payloads->len)
        break;
      Payload *pl = &g_array_index (payloads, Payload, j);
      if (pl->offset <= h->start && pl->offset + pl->length == h->end)
        {
          pl->unread = h->start - pl->offset;
          keep[i] = TRUE;
        }
    }
  return fill_holes (file->fd, file->path, (guint8 *) data, file->holes, keep, error);
}

/* With `file`, `data` is the loader's own private read of it (whose pages of copied payloads are
 * given back, and whose holes are read from the file); without, the caller's data. */
static OwbModel *
load_data (const guint8 *data, gsize size, const char *base_dir, const ModelFile *file, GError **error)
{
  const char *reason = NULL;
  if (data == NULL || size == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "not an ONNX model: the data is empty");
      return NULL;
    }
  if (!_owb_onnx_check_wire (&onnx__model_proto__descriptor, data, size, &reason))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "not an ONNX model: %s", reason);
      return NULL;
    }
  gsize skeleton_size = 0;
  g_autoptr (GArray) payloads = NULL;
  guint8 *skeleton = build_skeleton (data, size, &skeleton_size, &payloads);
  if (file && !match_holes (file, data, skeleton ? payloads : NULL, error))
    {
      g_free (skeleton);
      return NULL;
    }
  Onnx__ModelProto *mp = skeleton ? onnx__model_proto__unpack (_owb_onnx_allocator (), skeleton_size, skeleton)
                                  : onnx__model_proto__unpack (_owb_onnx_allocator (), size, data);
  g_free (skeleton);
  if (mp == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "not an ONNX model: the protobuf data is malformed or truncated");
      return NULL;
    }
  OwbModel *model = NULL;
  if (!mp->has_ir_version || mp->graph == NULL)
    g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "not an ONNX model: it has no %s",
                 mp->graph ? "ir_version" : "graph");
  else
    model = convert_model (mp, base_dir, data, size, payloads, file, error);
  onnx__model_proto__free_unpacked (mp, _owb_onnx_allocator ());
  if (model && !owb_model_validate (model, error))
    g_clear_pointer (&model, owb_model_unref);
  return model;
}

OwbModel *
owb_model_load_from_data (const void *data, gsize size, const char *base_dir, GError **error)
{
  return load_data (data, size, base_dir, NULL, error);
}

/* Regular files only (a FIFO would block, a device never end). The bytes are read into private
 * anonymous memory, not mapped from the file: a file truncated while it loads then gives an
 * error instead of SIGBUS, and the pages can still be released as soon as they are copied. With
 * `file`, the large payloads are left unread (see Filler) and fd stays open in it. */
static void *
read_file_sparse (const char *path, gsize *size_out, ModelFile *file, GError **error)
{
  struct stat st;
  int fd = _owb_open_regular_file (path, "model", &st, error);
  if (fd < 0)
    return NULL; /* "cannot open/read model 'PATH': ..." already */
  if (st.st_size <= 0 || (guint64) st.st_size > G_MAXSIZE)
    {
      close (fd);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: %s", path,
                   st.st_size <= 0 ? "the file is empty" : "the file is too large for this machine");
      return NULL;
    }
  gsize size = (gsize) st.st_size;
  void *buffer = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buffer == MAP_FAILED)
    {
      close (fd);
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "%s: cannot allocate %" G_GSIZE_FORMAT " bytes to read the model",
                   path, size);
      return NULL;
    }
  gboolean ok;
  if (file)
    {
      Filler f = { fd, path, buffer, size, 0, g_array_new (FALSE, FALSE, sizeof (Hole)) };
      ok = filler_scan (&f, 0, size, 0, error) && filler_need (&f, size, error);
      file->fd = fd;
      file->path = path;
      file->holes = f.holes;
    }
  else
    {
      ok = _owb_pread_exact (fd, buffer, size, 0, "model", path, error);
      close (fd);
    }
  if (!ok)
    {
      if (file)
        {
          close (fd);
          g_clear_pointer (&file->holes, g_array_unref);
        }
      munmap (buffer, size);
      return NULL;
    }
  *size_out = size;
  return buffer;
}

static void *
read_file (const char *path, gsize *size_out, GError **error)
{
  return read_file_sparse (path, size_out, NULL, error);
}

static OwbModel *
load_file (const char *path, const char *base_dir, OwbLoadProgressFunc progress, gpointer user_data,
           GCancellable *cancellable, GError **error)
{
  gsize size = 0;
  ModelFile file = { -1, NULL, NULL, cancellable };
  if (progress)
    progress (OWB_LOAD_PHASE_READING, user_data);
  void *buffer = read_file_sparse (path, &size, &file, error);
  if (!buffer)
    return NULL;
  OwbModel *model = NULL;
  GError *local = NULL;
  if (!g_cancellable_set_error_if_cancelled (cancellable, &local))
    {
      if (progress)
        progress (OWB_LOAD_PHASE_CHECKING, user_data);
      model = load_data (buffer, size, base_dir, &file, &local);
      if (!model && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_prefix_error (&local, "%s: ", path);
    }
  if (local)
    g_propagate_error (error, local);
  munmap (buffer, size);
  close (file.fd);
  g_array_unref (file.holes);
  return model;
}

typedef struct
{
  void *data;
  gsize size;
} FileBytes;

static void
file_bytes_free (gpointer data)
{
  FileBytes *f = data;
  munmap (f->data, f->size);
  g_free (f);
}

GBytes *
owb_model_read_file (const char *path, GError **error)
{
  FileBytes *f = g_new0 (FileBytes, 1);
  f->data = read_file (path, &f->size, error);
  if (!f->data)
    {
      g_free (f);
      return NULL;
    }
  return g_bytes_new_with_free_func (f->data, f->size, file_bytes_free, f);
}

OwbModel *
owb_model_load_file (const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base_dir = g_canonicalize_filename (dir, NULL);
  return load_file (path, base_dir, NULL, NULL, NULL, error);
}

OwbModel *
owb_model_load_file_with_progress (const char *path, OwbLoadProgressFunc progress, gpointer user_data,
                                   GCancellable *cancellable, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base_dir = g_canonicalize_filename (dir, NULL);
  return load_file (path, base_dir, progress, user_data, cancellable, error);
}
