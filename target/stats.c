// SPDX-License-Identifier: MIT
/* I/O counters: see stats.h. */
#include "stats.h"

#include "rblk_proto.h"

static const char *const op_names[TGT_STAT_NOPS] = {
	[TGT_STAT_READ] = "read",
	[TGT_STAT_WRITE] = "write",
	[TGT_STAT_FLUSH] = "flush",
	[TGT_STAT_DISCARD] = "discard",
	[TGT_STAT_WRITE_ZEROES] = "write_zeroes",
};

static const char *const dur_names[TGT_DUR_N] = {
	[TGT_DUR_FLUSH] = "flush",
	[TGT_DUR_FUA] = "fua",
	[TGT_DUR_FDATASYNC] = "fdatasync",
	[TGT_DUR_DSYNC_WRITE] = "dsync_writes",
};

static const char *const zc_names[TGT_ZC_N] = {
	[TGT_ZC_SENDS] = "sends",
	[TGT_ZC_BYTES] = "bytes",
	[TGT_ZC_COPIED] = "copied",
};

int tgt_stat_op_of(int rblk_opcode)
{
	switch (rblk_opcode) {
	case RBLK_OP_READ:		return TGT_STAT_READ;
	case RBLK_OP_WRITE:		return TGT_STAT_WRITE;
	case RBLK_OP_FLUSH:		return TGT_STAT_FLUSH;
	case RBLK_OP_DISCARD:		return TGT_STAT_DISCARD;
	case RBLK_OP_WRITE_ZEROES:	return TGT_STAT_WRITE_ZEROES;
	default:			return -1;
	}
}

const char *tgt_stat_op_name(int op)
{
	return op >= 0 && op < TGT_STAT_NOPS ? op_names[op] : "?";
}

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void tgt_stats_sum(struct tgt_io_stats *dst, const struct tgt_io_stats *src)
{
	for (int i = 0; i < TGT_STAT_NOPS; i++) {
		struct tgt_op_stats *d = &dst->op[i];
		const struct tgt_op_stats *s = &src->op[i];

		d->ops += ld(&s->ops);
		d->bytes += ld(&s->bytes);
		d->errors += ld(&s->errors);
		d->lat_ns += ld(&s->lat_ns);
		for (int b = 0; b < TGT_STAT_BUCKETS; b++)
			d->hist[b] += ld(&s->hist[b]);
	}
	for (int i = 0; i < TGT_DUR_N; i++)
		dst->dur[i] += ld(&src->dur[i]);
	for (int i = 0; i < TGT_ZC_N; i++)
		dst->zc[i] += ld(&src->zc[i]);
}

static int add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object *j = json_object_new_int64((int64_t)v);

	if (!j)
		return -1;
	return json_object_object_add(o, key, j);
}

/* root[key] = { names[i]: v[i] } for the n counters (relaxed loads). */
static int add_counters(json_object *root, const char *key,
			const char *const *names, const uint64_t *v, int n)
{
	json_object *o = json_object_new_object();

	if (!o || json_object_object_add(root, key, o))
		return -1;
	for (int i = 0; i < n; i++)
		if (add_u64(o, names[i], ld(&v[i])))
			return -1;
	return 0;
}

json_object *tgt_stats_to_json(const struct tgt_io_stats *s)
{
	json_object *root = json_object_new_object();

	if (!root)
		return NULL;
	for (int i = 0; i < TGT_STAT_NOPS; i++) {
		const struct tgt_op_stats *o = &s->op[i];
		json_object *jo = json_object_new_object(), *h;
		int last = -1;

		if (!jo || json_object_object_add(root, op_names[i], jo))
			goto out_free;
		if (add_u64(jo, "ops", ld(&o->ops)) ||
		    add_u64(jo, "bytes", ld(&o->bytes)) ||
		    add_u64(jo, "errors", ld(&o->errors)) ||
		    add_u64(jo, "lat_ns_sum", ld(&o->lat_ns)))
			goto out_free;
		h = json_object_new_array();
		if (!h || json_object_object_add(jo, "lat_us_log2", h))
			goto out_free;
		for (int b = 0; b < TGT_STAT_BUCKETS; b++)
			if (ld(&o->hist[b]))
				last = b;
		for (int b = 0; b <= last; b++)
			if (json_object_array_add(h, json_object_new_int64(
					(int64_t)ld(&o->hist[b]))))
				goto out_free;
	}
	if (add_counters(root, "durability", dur_names, s->dur, TGT_DUR_N) ||
	    add_counters(root, "zero_copy", zc_names, s->zc, TGT_ZC_N))
		goto out_free;
	return root;
out_free:
	json_object_put(root);
	return NULL;
}
