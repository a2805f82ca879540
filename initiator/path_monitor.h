/* SPDX-License-Identifier: MIT */
/*
 * The path monitor of a multipath device (docs/multipath.md): a thread
 * that logs in to each standby path every INI_PROBE_MS (rblk_probe: a
 * LOGIN, nothing taken at the target) and remembers since when each one
 * has answered without a break -- what rblkctl list shows as reachable or
 * unreachable, and what automatic failback waits on.
 */
#ifndef RBLK_INITIATOR_PATH_MONITOR_H
#define RBLK_INITIATOR_PATH_MONITOR_H

#include <stdint.h>

#include "rblk_client.h"

#define INI_PROBE_MS	2000

enum ini_probe {
	INI_PROBE_UNKNOWN,	/* not probed yet (or the path in use) */
	INI_PROBE_OK,		/* logged in, and it is our volume */
	INI_PROBE_DOWN,		/* the last probe failed */
	INI_PROBE_OTHER,	/* it is another volume */
};

struct ini_monitor;

/*
 * Starts probing paths[0..n) (transport, host, port; the rest of each
 * probe's options from base) for the volume whose uuid is given.  0 or
 * -errno.  Nothing to do for one path: *mp is NULL then.
 */
int  ini_monitor_start(struct ini_monitor **mp, const struct rblk_client_opts *base,
		       const struct rblk_client_path *paths, unsigned n,
		       const uint8_t uuid[RBLK_UUID_LEN]);
/* The path the device uses now: not probed (its queues watch it). */
void ini_monitor_set_active(struct ini_monitor *m, int idx);
/* What the last probe of path idx said, and since when (ms, CLOCK_MONOTONIC)
 * it has said OK without a break (0 when it does not). */
enum ini_probe ini_monitor_get(struct ini_monitor *m, unsigned idx, int64_t *ok_since);
const char *ini_probe_str(enum ini_probe p);
void ini_monitor_stop(struct ini_monitor *m);

#endif /* RBLK_INITIATOR_PATH_MONITOR_H */
