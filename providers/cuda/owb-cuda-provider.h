/* owb-cuda-provider.h: the CUDA execution provider (built with -Dcuda=auto|enabled).
 *
 * Its code is a module of its own (libowb-cuda.so, linked with the CUDA runtime, cuBLAS,
 * cuBLASLt and cuDNN) that libowb loads the first time a "cuda" provider is asked for: loading
 * those libraries costs about half a second, which every other program of this build (owb ops,
 * the tests, the app) does not pay. */
#pragma once

#include <owb/owb-provider.h>

G_BEGIN_DECLS

/* A new CUDA provider on device 0. Without a usable GPU, or when the module cannot be loaded, it
 * is still created: it claims nothing and every decline says why ("no CUDA device", and whether
 * this build has a kernel for the op). */
OwbProvider *owb_cuda_provider_new (void);

G_END_DECLS
