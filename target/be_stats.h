/* SPDX-License-Identifier: MIT */
/*
 * What a volume's backend is doing: commands in flight at the store and
 * how long the store took for each (from submit to the backend's
 * completion, without the network on either side), for every backend
 * alike.  One slot per reactor, written only by that reactor (plain
 * relaxed stores, as stats.h); the admin thread sums the slots.
 */
#ifndef RBLK_TARGET_BE_STATS_H
#define RBLK_TARGET_BE_STATS_H

#include <stdint.h>

#include <json-c/json.h>

#include "config.h"
#include "stats.h"

struct tgt_be_slot {
	uint64_t submitted;
	uint64_t completed;
	uint64_t errors;
	uint64_t lat_ns;		/* sum over completed */
	uint64_t lat_max_ns;
	uint64_t hist[TGT_STAT_BUCKETS];	/* as struct tgt_op_stats */
} __attribute__((aligned(64)));

struct tgt_be_stats {
	/* Made by reactor i on its first command (release store), read by
	 * the admin thread (acquire load). */
	struct tgt_be_slot *slot[TGT_CFG_MAX_REACTORS];
};

/* A zeroed table, or NULL on ENOMEM. */
struct tgt_be_stats *tgt_be_stats_create(void);
/* Frees the table and its slots (no reactor may use it any more). */
void tgt_be_stats_destroy(struct tgt_be_stats *s);

/* Reactor reactor_id's slot, made on first use; NULL on ENOMEM or an id
 * past the table (then nothing is counted).  That reactor's thread. */
struct tgt_be_slot *tgt_be_stats_slot(struct tgt_be_stats *s,
				      unsigned reactor_id);

/*
 * {"in_flight":N, "ops":N, "errors":N, "lat_ns_sum":N, "lat_max_ns":N,
 * "lat_us_log2":[..]} summed over the slots (any thread); NULL on ENOMEM.
 */
json_object *tgt_be_stats_to_json(const struct tgt_be_stats *s);

#endif /* RBLK_TARGET_BE_STATS_H */
