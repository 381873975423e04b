/* owb-error.h: the one error domain of libowb and its codes. */
#pragma once

#include <owb/owb-api.h>
#include <glib.h>

G_BEGIN_DECLS

#define OWB_ERROR (owb_error_quark ())

typedef enum {
  OWB_ERROR_INVALID_MODEL,   /* the model file or graph is malformed */
  OWB_ERROR_UNSUPPORTED_OP,  /* no schema or no kernel for an op/opset/type */
  OWB_ERROR_SHAPE,           /* shapes do not agree, or overflow */
  OWB_ERROR_TYPE,            /* element types do not agree */
  OWB_ERROR_NOMEM,           /* an allocation failed or was refused as absurd */
  OWB_ERROR_IO,              /* a file could not be read or written */
  OWB_ERROR_DEVICE,          /* an execution provider's device failed */
  OWB_ERROR_CANCELLED,       /* the caller cancelled long work */
  OWB_ERROR_INVALID_ARGUMENT /* the caller passed something wrong (missing input, bad option) */
} OwbError;

OWB_API GQuark owb_error_quark (void);

/* Whether error says the caller cancelled: OWB_ERROR_CANCELLED from the engine's long work, or
 * G_IO_ERROR_CANCELLED from a GCancellable checked directly (a run, a load, a layout thread).
 * Every "was this cancelled" test asks this, so none forgets one of the two. NULL: FALSE. */
OWB_API gboolean owb_error_is_cancelled (const GError *error);

G_END_DECLS
