/* owb-onnx-private.h: helpers shared by the ONNX protobuf reader and writer and the tensor-file code. */
#pragma once

#include <owb/owb-graph.h>

#include <stdio.h>
#include <sys/stat.h>

#include "onnx-owb.pb-c.h"

G_BEGIN_DECLS

/* Nesting deeper than this (messages inside messages) is refused before unpacking, because
 * protobuf-c unpacks recursively and a crafted file could otherwise exhaust the stack. */
#define OWB_ONNX_MAX_MESSAGE_DEPTH 400

/* The unit of byte swapping between the little-endian file and a big-endian host: an element, or
 * each half (real, imaginary) of a complex one. */
static inline gsize
_owb_onnx_component_size (OwbDataType dtype)
{
  gsize size = owb_data_type_size (dtype);
  return dtype == OWB_TYPE_COMPLEX64 || dtype == OWB_TYPE_COMPLEX128 ? size / 2 : size;
}

/* An external data file a model read tensors from; model->mappings holds these. Tensors are
 * copied out with pread, never mapped: a file that shrinks under us gives an error, not SIGBUS.
 * `path` is the resolved real path; device and inode let a save refuse to overwrite the file. */
typedef struct {
  int fd;               /* open while the model loads; -1 after */
  char *path;
  guint64 size;
  guint64 device, inode; /* the file's identity, for owb_model_find_external_file */
} OwbMappedFile;

/* Opens a file for reading only if it is a regular file (a FIFO must not block the loader, a
 * device must not be read forever); -1 with an OWB_ERROR_IO error naming `what` and the path
 * otherwise. st receives its status. */
int _owb_open_regular_file (const char *path, const char *what, struct stat *st, GError **error);
/* Reads exactly size bytes at offset; FALSE with an OWB_ERROR_IO error when the file ends early
 * (it shrank since it was opened) or a read fails. */
gboolean _owb_pread_exact (int fd, void *buffer, gsize size, guint64 offset, const char *what, const char *path,
                           GError **error);

void _owb_mapped_file_free (gpointer mapped);

/* A protobuf-c allocator on top of g_try_malloc/g_free: byte buffers of an unpacked message can
 * be taken over (and later released with g_free) instead of copied. */
ProtobufCAllocator *_owb_onnx_allocator (void);

/* FALSE when the wire data is malformed or nests messages of `descriptor` deeper than
 * OWB_ONNX_MAX_MESSAGE_DEPTH; *reason then says which (static string). */
gboolean _owb_onnx_check_wire (const ProtobufCMessageDescriptor *descriptor, const guint8 *data, gsize size,
                               const char **reason);

/* A dense tensor from a TensorProto that holds its data inline. With steal, raw_data is taken
 * from the message (its field is cleared) instead of copied. External data is refused here. */
OwbTensor *_owb_onnx_tensor_from_proto (Onnx__TensorProto *proto, gboolean steal, GError **error);


/* Element count and byte size in the file (packed for sub-byte types) of a TensorProto's declared
 * shape; FALSE with an error naming the tensor for bad ranks, dims, or sizes that overflow. */
gboolean _owb_onnx_tensor_proto_shape (const Onnx__TensorProto *proto, int *rank, int64_t *dims, int64_t *nelems,
                                       gsize *nbytes, GError **error);

/* Like owb_tensor_load_pb_data, for a value whose kind the caller knows (from the graph input's
 * type): the bytes alone cannot tell a one-element sequence from an optional. Other kinds guess. */
OwbTensor *_owb_tensor_load_pb_data_for_kind (const void *data, gsize size, OwbValueKind kind, char **name,
                                              GError **error);

/* Allocations for messages built for packing, released together. */
typedef struct {
  GPtrArray *blocks;
} OwbProtoArena;

gpointer _owb_proto_arena_alloc (OwbProtoArena *arena, gsize size);

/* Fills `proto` (already initialised with ONNX__TENSOR_PROTO__INIT) from a tensor. The data is
 * referenced, not copied, on little-endian hosts: the tensor must outlive the packing. */
gboolean _owb_onnx_tensor_to_proto (OwbProtoArena *arena, const OwbTensor *tensor, const char *name,
                                    Onnx__TensorProto *proto, GError **error);

/* A dense tensor from a SparseTensorProto (values scattered into zeros). */
OwbTensor *_owb_onnx_sparse_to_dense (Onnx__SparseTensorProto *sparse, GError **error);

/* A file written completely or not at all: an unnamed O_TMPFILE in the target's folder where the
 * filesystem allows, else a temporary PATH.tmp-XXXXXX; either is linked or renamed over `path`
 * once complete. The writer holds an exclusive flock on it meanwhile, so that a later open beside
 * the same target can tell a stale temporary (a writer killed with SIGKILL) and remove it. */
typedef struct {
  char *path;
  char *tmp_path;    /* NULL for an anonymous file until it is linked */
  FILE *file;
  gboolean anonymous;
  gboolean flushed;
  int slot;          /* in the signal handler's list of names to remove, plus one; 0 for none */
} OwbAtomicFile;

gboolean _owb_atomic_file_open (OwbAtomicFile *af, const char *path, GError **error);
/* Streams a message into the file without building it in memory first; FALSE on a write error
 * (the close then reports it too). */
gboolean _owb_atomic_file_write_message (OwbAtomicFile *af, const ProtobufCMessage *message);
/* Flushes and syncs (the data is on disk); the file stays open and unnamed or temporary. */
gboolean _owb_atomic_file_close (OwbAtomicFile *af, GError **error);
/* Flushes if needed, names the file and renames it over the target, then closes it. */
gboolean _owb_atomic_file_commit (OwbAtomicFile *af, GError **error);
/* Removes the temporary file, if any; safe to call after commit or on a zeroed struct. */
void _owb_atomic_file_abort (OwbAtomicFile *af);

G_END_DECLS
