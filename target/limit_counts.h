/* SPDX-License-Identifier: MIT */
/*
 * How often the target's limits acted (docs/admin.md, "Resource limits"):
 * connections refused over a cap, back-pressure waits, sessions closed by a
 * timer.  Process-wide monotonic counters, bumped from any thread and read
 * by the admin socket's "stats" (rblkctl stats), so an admin can tell a
 * cap that bites from one that never does.
 */
#ifndef RBLK_TARGET_LIMIT_COUNTS_H
#define RBLK_TARGET_LIMIT_COUNTS_H

#include <json-c/json.h>

enum tgt_limit_event {
	TGT_LIM_REFUSED_MAX_CONNS,		/* max_connections */
	TGT_LIM_REFUSED_MAX_CONNS_HOST,		/* max_connections_per_host */
	TGT_LIM_REFUSED_PRELOGIN,		/* max_prelogin */
	TGT_LIM_REFUSED_PRELOGIN_HOST,		/* max_prelogin_per_host */
	TGT_LIM_BACKPRESSURE,			/* a connection began to wait for memory */
	TGT_LIM_CLOSED_LOGIN_TIMEOUT,
	TGT_LIM_CLOSED_IDLE_TIMEOUT,
	TGT_LIM_CLOSED_DATA_TIMEOUT,
	TGT_LIM_CLOSED_STALL_TIMEOUT,		/* unread answers pinned buffers */
	TGT_LIM_CLOSED_BUFFER_PRESSURE,		/* stalled while others waited */
	TGT_LIM_N
};

void tgt_limit_count(enum tgt_limit_event ev);
/* {"refused_max_connections": N, ...}; NULL when out of memory. */
json_object *tgt_limits_to_json(void);

#endif
