/* owb-error.c: the error domain. */
#include <owb/owb-error.h>

#include <gio/gio.h>

G_DEFINE_QUARK (owb-error-quark, owb_error)

gboolean
owb_error_is_cancelled (const GError *error)
{
  return g_error_matches (error, OWB_ERROR, OWB_ERROR_CANCELLED)
         || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}
