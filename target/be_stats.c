// SPDX-License-Identifier: MIT
/* Backend in-flight and latency counters (be_stats.h). */
#include "be_stats.h"

#include <stdlib.h>
#include <string.h>

struct tgt_be_stats *tgt_be_stats_create(void)
{
	return calloc(1, sizeof(struct tgt_be_stats));
}

void tgt_be_stats_destroy(struct tgt_be_stats *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < TGT_CFG_MAX_REACTORS; i++)
		free(s->slot[i]);
	free(s);
}

struct tgt_be_slot *tgt_be_stats_slot(struct tgt_be_stats *s,
				      unsigned reactor_id)
{
	struct tgt_be_slot *slot;

	if (!s || reactor_id >= TGT_CFG_MAX_REACTORS)
		return NULL;
	slot = s->slot[reactor_id];
	if (slot)
		return slot;
	slot = aligned_alloc(64, sizeof(*slot));
	if (!slot)
		return NULL;
	memset(slot, 0, sizeof(*slot));
	__atomic_store_n(&s->slot[reactor_id], slot, __ATOMIC_RELEASE);
	return slot;
}

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

json_object *tgt_be_stats_to_json(const struct tgt_be_stats *s)
{
	uint64_t submitted = 0, completed = 0, errors = 0, lat = 0, max = 0;
	uint64_t hist[TGT_STAT_BUCKETS] = { 0 };
	json_object *o = json_object_new_object(), *h;
	int last = -1;

	if (!o)
		return NULL;
	for (unsigned i = 0; s && i < TGT_CFG_MAX_REACTORS; i++) {
		const struct tgt_be_slot *slot =
			__atomic_load_n(&s->slot[i], __ATOMIC_ACQUIRE);

		if (!slot)
			continue;
		/* completed first: a command counted there was counted as
		 * submitted before, so in_flight never goes below zero. */
		completed += __atomic_load_n(&slot->completed, __ATOMIC_ACQUIRE);
		submitted += ld(&slot->submitted);
		errors += ld(&slot->errors);
		lat += ld(&slot->lat_ns);
		if (ld(&slot->lat_max_ns) > max)
			max = ld(&slot->lat_max_ns);
		for (unsigned b = 0; b < TGT_STAT_BUCKETS; b++)
			hist[b] += ld(&slot->hist[b]);
	}
	json_object_object_add(o, "in_flight", json_object_new_int64(
		(int64_t)(submitted > completed ? submitted - completed : 0)));
	json_object_object_add(o, "ops", json_object_new_int64((int64_t)completed));
	json_object_object_add(o, "errors", json_object_new_int64((int64_t)errors));
	json_object_object_add(o, "lat_ns_sum", json_object_new_int64((int64_t)lat));
	json_object_object_add(o, "lat_max_ns", json_object_new_int64((int64_t)max));
	for (unsigned b = 0; b < TGT_STAT_BUCKETS; b++)
		if (hist[b])
			last = b;
	h = json_object_new_array();
	for (int b = 0; h && b <= last; b++)
		json_object_array_add(h, json_object_new_int64((int64_t)hist[b]));
	json_object_object_add(o, "lat_us_log2", h);
	return o;
}
