/* owb-api.h: OWB_API marks what a library of the project exports. libowb, libowb-quant and
 * libowb-profiler are built with hidden symbol visibility, so a function or variable is public ABI
 * only if its declaration in a public header (under owb/) carries OWB_API; everything else, the
 * _owb_* internals included, stays inside its library (tests reach those through the static
 * libraries the shared ones are made of). */
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define OWB_API __attribute__ ((visibility ("default")))
#else
#define OWB_API
#endif
