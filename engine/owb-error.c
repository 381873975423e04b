/* owb-error.c: the error domain. */
#include <owb/owb-error.h>

G_DEFINE_QUARK (owb-error-quark, owb_error)
