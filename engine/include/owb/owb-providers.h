/* owb-providers.h: the execution providers built into libowb (implemented in providers/). */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-provider.h>

G_BEGIN_DECLS

/* The CPU provider: always present, runs every op the engine implements. */
OWB_API OwbProvider *owb_cpu_provider_new (void);

/* Providers from a comma-separated list of names ("cuda,cpu"), in priority order. "cpu" is
 * appended when missing, since it is the provider of last resort. Unknown names, or providers
 * not built in, are an OWB_ERROR_INVALID_ARGUMENT error. Returns a GPtrArray of OwbProvider *
 * that frees them. */
OWB_API GPtrArray *owb_providers_new_from_list (const char *names, GError **error);
/* Names of the providers this build has (and those registered), NULL-terminated; valid until the
 * next owb_providers_register. */
OWB_API const char *const *owb_providers_get_available (void);

/* Makes a provider built outside libowb (a test's, a plugin's) available by name to
 * owb_providers_new_from_list. new_func creates a fresh provider each time. Registering a name
 * again replaces it. Not thread-safe against concurrent lookups: register at start-up. */
typedef OwbProvider *(*OwbProviderNewFunc) (void);
OWB_API void owb_providers_register (const char *name, OwbProviderNewFunc new_func);

G_END_DECLS
