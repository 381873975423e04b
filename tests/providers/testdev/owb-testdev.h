/* owb-testdev.h: a device provider for tests, on machines without a GPU. "testdev" keeps its tensors
 * in buffers of its own (host memory behind the OwbDevice interface, poisoned when freed), claims
 * most tensor ops and runs the CPU provider's kernels on them. A model run with "testdev,cpu"
 * exercises everything a real device provider needs from the session: placement, Memcpy nodes,
 * constants uploaded once, shape inputs kept on the host, per-device memory plans. Its kernels check
 * that every input arrives in the memory the contract says. */
#pragma once

#include <owb/owb-provider.h>

G_BEGIN_DECLS

typedef struct {
  gint64 allocs, frees;        /* device buffers */
  gint64 live_bytes;
  gint64 to_device, to_host, within; /* copies */
  gint64 kernels;              /* kernels run */
  gint64 fixups;               /* outputs a CPU kernel made in host memory, moved to the device */
  gint64 groups;               /* group kernels run (claim_group) */
} OwbTestdevStats;

OwbProvider *owb_testdev_provider_new (void);
/* Makes "testdev" known to owb_providers_new_from_list. */
void owb_testdev_register (void);
/* Counters over every testdev provider of the process. */
void owb_testdev_get_stats (OwbTestdevStats *stats);

G_END_DECLS
