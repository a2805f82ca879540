/* SPDX-License-Identifier: MIT */
/*
 * I/O counters: per op type ops, bytes, errors, latency sum and a log2
 * latency histogram.  Each struct tgt_io_stats has exactly one writer (the
 * reactor that owns the connection, or reactor r's slot of a volume's
 * per-reactor array), so updates are plain relaxed load+store pairs with no
 * lock and no locked instruction; readers (the admin thread) sum the slots
 * with relaxed loads.  A reader may see ops updated before bytes: counters
 * are monotonic and read live, so that skew is harmless.
 */
#ifndef RBLK_TARGET_STATS_H
#define RBLK_TARGET_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

enum tgt_stat_op {
	TGT_STAT_READ,
	TGT_STAT_WRITE,
	TGT_STAT_FLUSH,
	TGT_STAT_DISCARD,
	TGT_STAT_WRITE_ZEROES,
	TGT_STAT_NOPS
};

/* Bucket i counts latencies in [2^i, 2^(i+1)) microseconds (bucket 0 also
 * takes < 1 us); the last bucket takes everything above 2^27 us (~2 min). */
#define TGT_STAT_BUCKETS	28

struct tgt_op_stats {
	uint64_t ops;
	uint64_t bytes;
	uint64_t errors;
	uint64_t lat_ns;		/* sum, for the mean */
	uint64_t hist[TGT_STAT_BUCKETS];
};

/*
 * The durability chain: what the target did for FLUSH and FUA.  Counted
 * when the backend finished the command, before its reply is sent, so a
 * client that got the reply sees the counters raised.
 */
enum tgt_dur_counter {
	TGT_DUR_FLUSH,		/* FLUSH commands that reached the backend */
	TGT_DUR_FUA,		/* WRITE / WRITE_ZEROES commands with FUA */
	TGT_DUR_FDATASYNC,	/* fdatasync(2) calls + io_uring FSYNC(DATASYNC) ops */
	TGT_DUR_DSYNC_WRITE,	/* write submissions carrying RWF_DSYNC */
	TGT_DUR_N
};

/*
 * Zero-copy sends (TCP, docs/target.md): the sends the kernel read straight
 * from the I/O buffers, the bytes they carried, and the notifications in
 * which the kernel said it had copied after all (loopback, a device
 * without scatter-gather).
 */
enum tgt_zc_counter {
	TGT_ZC_SENDS,
	TGT_ZC_BYTES,
	TGT_ZC_COPIED,
	TGT_ZC_N
};

struct tgt_io_stats {
	struct tgt_op_stats op[TGT_STAT_NOPS];
	uint64_t dur[TGT_DUR_N];	/* enum tgt_dur_counter */
	uint64_t zc[TGT_ZC_N];		/* enum tgt_zc_counter */
} __attribute__((aligned(64)));	/* one writer per cache line set */

/* Maps an RBLK_OP_* opcode to its slot; -1 for an unknown opcode. */
int tgt_stat_op_of(int rblk_opcode);
/* "read", "write", "flush", "discard", "write_zeroes". */
const char *tgt_stat_op_name(int op);

/* Bucket index for a latency in nanoseconds. */
static inline unsigned tgt_stat_bucket(uint64_t lat_ns)
{
	uint64_t us = lat_ns / 1000;
	unsigned b = us ? 63 - __builtin_clzll(us) : 0;

	return b < TGT_STAT_BUCKETS ? b : TGT_STAT_BUCKETS - 1;
}

static inline void tgt_stat_inc(uint64_t *c, uint64_t v)
{
	/* Single writer: no read-modify-write atomic needed, only no tearing. */
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

/*
 * Counts one finished command (writer thread only).  op is an RBLK_OP_*
 * opcode (unknown ones are ignored); bytes is what moved (0 on error).
 */
static inline void tgt_stats_account(struct tgt_io_stats *s, int rblk_opcode,
				     uint32_t bytes, uint64_t lat_ns,
				     bool error)
{
	int i = tgt_stat_op_of(rblk_opcode);
	struct tgt_op_stats *o;

	if (i < 0)
		return;
	o = &s->op[i];
	tgt_stat_inc(&o->ops, 1);
	if (error)
		tgt_stat_inc(&o->errors, 1);
	else
		tgt_stat_inc(&o->bytes, bytes);
	tgt_stat_inc(&o->lat_ns, lat_ns);
	tgt_stat_inc(&o->hist[tgt_stat_bucket(lat_ns)], 1);
}

/*
 * Counts what one finished FLUSH or FUA command cost (writer thread only):
 * flush/fua say what the command was, syncs and dsync_writes what the
 * backend issued for it.
 */
static inline void tgt_stats_account_dur(struct tgt_io_stats *s, bool flush,
					 bool fua, unsigned syncs,
					 unsigned dsync_writes)
{
	if (flush)
		tgt_stat_inc(&s->dur[TGT_DUR_FLUSH], 1);
	if (fua)
		tgt_stat_inc(&s->dur[TGT_DUR_FUA], 1);
	if (syncs)
		tgt_stat_inc(&s->dur[TGT_DUR_FDATASYNC], syncs);
	if (dsync_writes)
		tgt_stat_inc(&s->dur[TGT_DUR_DSYNC_WRITE], dsync_writes);
}

/* Adds n to zero-copy counter i (writer thread only). */
static inline void tgt_stats_account_zc(struct tgt_io_stats *s,
					enum tgt_zc_counter i, uint64_t n)
{
	tgt_stat_inc(&s->zc[i], n);
}

/* dst += src, reading src with relaxed loads (any thread). */
void tgt_stats_sum(struct tgt_io_stats *dst, const struct tgt_io_stats *src);

/*
 * JSON form: {"read":{"ops":..,"bytes":..,"errors":..,"lat_ns_sum":..,
 * "lat_us_log2":[..]}, "write":{..}, ..., "durability":{"flush":..,
 * "fua":.., "fdatasync":.., "dsync_writes":..}, "zero_copy":{"sends":..,
 * "bytes":.., "copied":..}}; NULL on ENOMEM.  The histogram
 * array is trimmed after its last non-zero bucket.
 */
json_object *tgt_stats_to_json(const struct tgt_io_stats *s);

#endif /* RBLK_TARGET_STATS_H */
