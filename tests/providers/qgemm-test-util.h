/* qgemm-test-util.h: what the integer GEMM and convolution tests share: holding the integer
 * kernels to one path (portable, AVX2, AVX-512 VNNI, AMX) for a test, or skipping it. */
#pragma once

#include <glib.h>
#include "../../providers/cpu/cpu-qgemm-private.h"

typedef enum {
  QPATH_PORTABLE,
  QPATH_AVX2, /* forced, also on a CPU with VNNI */
  QPATH_VNNI, /* AMX kept off */
  QPATH_AMX,
} QPath;

/* Back to the path the CPU chooses. */
static inline void
qpath_release (void)
{
  _owb_qgemm_force_portable (FALSE);
  _owb_qgemm_force_avx2 (FALSE);
  _owb_qgemm_force_no_amx (FALSE);
}

/* Holds the integer kernels to `path` until qpath_release; where this CPU (or its kernel, for AMX)
 * does not have it, skips the test, holds nothing and returns FALSE. */
static inline gboolean
qpath_hold (QPath path)
{
  _owb_qgemm_force_portable (path == QPATH_PORTABLE);
  _owb_qgemm_force_avx2 (path == QPATH_AVX2);
  _owb_qgemm_force_no_amx (path == QPATH_VNNI);
  const char *missing = NULL;
  if (path == QPATH_AVX2 && !_owb_qgemm_uses_avx2 ())
    missing = "no AVX2 on this CPU";
  else if (path == QPATH_VNNI && !_owb_qgemm_uses_vnni ())
    missing = "no AVX-512 VNNI on this CPU";
  else if (path == QPATH_AMX && !_owb_qgemm_uses_amx ())
    missing = "no AMX-INT8 on this CPU (or the kernel does not allow it)";
  if (missing)
    {
      g_test_skip (missing);
      qpath_release ();
    }
  return missing == NULL;
}
