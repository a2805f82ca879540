// SPDX-License-Identifier: MIT
/* Counters of the target's limits acting (limit_counts.h). */
#include <stdatomic.h>
#include <stdint.h>

#include "limit_counts.h"

static atomic_uint_fast64_t counts[TGT_LIM_N];

/* The JSON keys, in enum order: also what rblkctl stats prints. */
static const char *const names[TGT_LIM_N] = {
	[TGT_LIM_REFUSED_MAX_CONNS] = "refused_max_connections",
	[TGT_LIM_REFUSED_MAX_CONNS_HOST] = "refused_max_connections_per_host",
	[TGT_LIM_REFUSED_PRELOGIN] = "refused_max_prelogin",
	[TGT_LIM_REFUSED_PRELOGIN_HOST] = "refused_max_prelogin_per_host",
	[TGT_LIM_BACKPRESSURE] = "backpressure_waits",
	[TGT_LIM_CLOSED_LOGIN_TIMEOUT] = "closed_login_timeout",
	[TGT_LIM_CLOSED_IDLE_TIMEOUT] = "closed_idle_timeout",
	[TGT_LIM_CLOSED_DATA_TIMEOUT] = "closed_data_timeout",
	[TGT_LIM_CLOSED_STALL_TIMEOUT] = "closed_stall_timeout",
	[TGT_LIM_CLOSED_BUFFER_PRESSURE] = "closed_buffer_pressure",
};

void tgt_limit_count(enum tgt_limit_event ev)
{
	if (ev < TGT_LIM_N)
		atomic_fetch_add_explicit(&counts[ev], 1, memory_order_relaxed);
}

json_object *tgt_limits_to_json(void)
{
	json_object *o = json_object_new_object();

	for (unsigned i = 0; o && i < TGT_LIM_N; i++) {
		uint64_t v = atomic_load_explicit(&counts[i], memory_order_relaxed);

		if (json_object_object_add(o, names[i], json_object_new_int64((int64_t)v))) {
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}
