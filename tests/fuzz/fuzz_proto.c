// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for every decoder and validator in proto/: the PDU
 * header, LOGIN, LOGIN_RSP, command capsules with their descriptors, the
 * volume range check, RSP, DISCOVER, DISCOVER_RSP and its entries, the RDMA
 * CM private data and volume/host names.
 *
 * Input: a 16-byte parameter block (struct fz_params: the command limits and
 * volume geometry the decoders are given), then the bytes every decoder is
 * run on.  Besides memory safety (ASan, UBSan) each decoder that says OK is
 * held to what docs/protocol.md promises, and a decoded PDU must survive
 * encode -> decode unchanged.  Any broken promise aborts (a crash to
 * libFuzzer).  tests/fuzz/gen-seeds.py writes the seed corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "rblk_proto.h"

struct fz_params {
	uint16_t queue_depth;	/* % (RBLK_MAX_QUEUE_DEPTH + 1) */
	uint8_t  max_sge;	/* % (RBLK_MAX_SGE + 1) */
	uint8_t  tcp;		/* bit 0 */
	uint32_t max_io;	/* % (RBLK_MAX_IO_SIZE + 1) */
	uint32_t inline_size;	/* % (RBLK_MAX_INLINE + 1) */
	uint8_t  bs_4k;		/* bit 0: 4096-byte blocks, else 512 */
	uint8_t  vol_flags;	/* RBLK_VOL_F_* bits */
	uint8_t  size_shift;	/* volume size 1 << (size_shift % 64), block rounded */
	uint8_t  status;	/* for the status/opcode name tables */
};
_Static_assert(sizeof(struct fz_params) == 16, "params block is 16 bytes");

#define CHECK(cond) do {							\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: broken promise: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }

/* A copy of exactly n bytes on the heap, so any read past n is caught. */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	if (!q)
		abort();
	memcpy(q, p, n);
	return q;
}

static void fuzz_hdr(const uint8_t *b, size_t n)
{
	static const uint32_t max_lens[] = { 0, 64, 4096, RBLK_MAX_PDU, UINT32_MAX };

	for (unsigned i = 0; i < ARRAY_SIZE(max_lens); i++) {
		uint8_t type = 0;
		uint32_t len = 0;
		int st = rblk_decode_hdr(b, n, max_lens[i], &type, &len);

		CHECK(st >= 0 && st < RBLK_S__MAX);
		if (st != RBLK_S_OK)
			continue;
		CHECK(n >= sizeof(struct rblk_wire_hdr));
		CHECK(b[1] == RBLK_PROTO_VERSION && get16(b + 2) == 0);
		CHECK(rblk_pdu_fixed_size(type) != 0);
		CHECK(len >= rblk_pdu_fixed_size(type) && len <= max_lens[i]);
	}
}

static void fuzz_login(const uint8_t *b, size_t n)
{
	struct rblk_login l, l2;
	uint8_t w[sizeof(struct rblk_wire_login)];

	memset(&l, 0, sizeof(l));
	if (rblk_decode_login(b, n, &l) != RBLK_S_OK)
		return;
	CHECK(n == sizeof(struct rblk_wire_login));
	CHECK(l.queue_depth != 0 && l.flags == 0);
	CHECK(rblk_name_valid(l.volume) == 0 && rblk_name_valid(l.host) == 0);
	CHECK(l.has_mac == !!memcmp(l.auth_mac, (uint8_t[RBLK_MAC_LEN]){ 0 },
				   RBLK_MAC_LEN));
	CHECK(rblk_encode_login(w, &l) == sizeof(w));
	memset(&l2, 0, sizeof(l2));
	CHECK(rblk_decode_login(w, sizeof(w), &l2) == RBLK_S_OK);
	/* Names compare as strings: bytes after the NUL are not carried. */
	CHECK(l.queue_id == l2.queue_id && l.queue_depth == l2.queue_depth);
	CHECK(l.flags == l2.flags && l.has_mac == l2.has_mac);
	CHECK(!strcmp(l.volume, l2.volume) && !strcmp(l.host, l2.host));
	CHECK(!memcmp(l.auth_mac, l2.auth_mac, RBLK_MAC_LEN));
}

static void fuzz_login_rsp(const uint8_t *b, size_t n)
{
	struct rblk_login_rsp r, r2;
	uint8_t w[sizeof(struct rblk_wire_login_rsp)];

	memset(&r, 0, sizeof(r));
	if (rblk_decode_login_rsp(b, n, &r) != RBLK_S_OK)
		return;
	CHECK(n == sizeof(struct rblk_wire_login_rsp));
	if (r.status == RBLK_S_OK) {
		CHECK(r.block_size == 512 || r.block_size == 4096);
		CHECK(r.size % r.block_size == 0);
		CHECK(r.queue_depth >= 1 && r.queue_depth <= RBLK_MAX_QUEUE_DEPTH);
		CHECK(r.max_io >= r.block_size && r.max_io <= RBLK_MAX_IO_SIZE &&
		      r.max_io % r.block_size == 0);
		CHECK(r.inline_size <= RBLK_MAX_INLINE);
		CHECK(r.max_sge >= 1 && r.max_sge <= RBLK_MAX_SGE);
		CHECK(!(r.vol_flags & ~RBLK_VOL_F__ALL));
		/* [V34] */
		CHECK((r.vol_flags & RBLK_VOL_F_DISCARD) ?
		      r.max_discard >= r.block_size &&
		      r.max_discard % r.block_size == 0 : !r.max_discard);
		CHECK((r.vol_flags & RBLK_VOL_F_WRITE_ZEROES) ?
		      r.max_write_zeroes >= r.block_size &&
		      r.max_write_zeroes % r.block_size == 0 : !r.max_write_zeroes);
	}
	CHECK(rblk_encode_login_rsp(w, &r) == sizeof(w));
	memset(&r2, 0, sizeof(r2));
	CHECK(rblk_decode_login_rsp(w, sizeof(w), &r2) == RBLK_S_OK);
	CHECK(!memcmp(&r, &r2, sizeof(r)));
}

static void fuzz_cmd(const uint8_t *b, size_t n, const struct fz_params *p)
{
	struct rblk_cmd_limits lim = {
		.queue_depth = p->queue_depth % (RBLK_MAX_QUEUE_DEPTH + 1),
		.max_io = p->max_io % (RBLK_MAX_IO_SIZE + 1),
		.inline_size = p->inline_size % (RBLK_MAX_INLINE + 1),
		.max_sge = p->max_sge % (RBLK_MAX_SGE + 1),
		.tcp = p->tcp & 1,
		.max_discard = RBLK_DEFAULT_MAX_DISCARD,
		.max_write_zeroes = RBLK_DEFAULT_MAX_WRITE_ZEROES,
	};
	uint32_t bs = (p->bs_4k & 1) ? 4096 : 512;
	uint64_t size = (1ull << (p->size_shift % 64)) / bs * bs;
	/* Exactly max_sge entries: the decoder must not write past them. */
	struct rblk_sge *sgl = malloc((lim.max_sge ? lim.max_sge : 1) * sizeof(*sgl));
	struct rblk_sge *sgl2 = malloc(RBLK_MAX_SGE * sizeof(*sgl2));
	struct rblk_cmd c, c2;
	uint64_t total = 0;
	uint8_t *w;
	int st;

	if (!sgl || !sgl2)
		abort();
	memset(&c, 0, sizeof(c));
	st = rblk_decode_cmd(b, n, &lim, &c, sgl);
	CHECK(st >= 0 && st < RBLK_S__MAX);
	if (st != RBLK_S_OK)
		goto out;
	CHECK(c.tag < lim.queue_depth);
	CHECK(c.opcode >= RBLK_OP_READ && c.opcode <= RBLK_OP_WRITE_ZEROES);
	CHECK(!(c.flags & ~RBLK_CMD_F__ALL));
	CHECK(!c.flags || c.opcode == RBLK_OP_WRITE || c.opcode == RBLK_OP_WRITE_ZEROES);
	CHECK(c.nsge <= lim.max_sge && (!lim.tcp || !c.nsge));
	CHECK(n == sizeof(struct rblk_wire_cmd) + 16u * c.nsge + c.inline_len);
	switch (c.opcode) {
	case RBLK_OP_FLUSH:
		CHECK(!c.length && !c.nsge && !c.inline_len);
		break;
	case RBLK_OP_DISCARD:
	case RBLK_OP_WRITE_ZEROES:
		CHECK(c.length && !c.nsge && !c.inline_len);
		CHECK(c.length <= (c.opcode == RBLK_OP_DISCARD ? lim.max_discard
							       : lim.max_write_zeroes));
		break;
	default:
		CHECK(c.length && c.length <= lim.max_io);
		if (c.inline_len) {
			CHECK(c.opcode == RBLK_OP_WRITE && !c.nsge &&
			      c.inline_len == c.length);
			CHECK(lim.tcp || c.inline_len <= lim.inline_size);
		} else if (lim.tcp) {
			CHECK(c.opcode == RBLK_OP_READ);
		} else {
			CHECK(c.nsge);
			for (unsigned i = 0; i < c.nsge; i++) {
				CHECK(sgl[i].length);
				total += sgl[i].length;
			}
			CHECK(total == c.length);
		}
	}

	/* encode -> decode gives the same command and descriptors */
	w = malloc(n);
	if (!w)
		abort();
	memcpy(w, b, n);
	rblk_encode_cmd(w, &c, n);
	for (unsigned i = 0; i < c.nsge && !c.inline_len && !lim.tcp; i++)
		rblk_encode_sge(w + 64 + 16 * i, &sgl[i]);
	memset(&c2, 0, sizeof(c2));
	CHECK(rblk_decode_cmd(w, n, &lim, &c2, sgl2) == RBLK_S_OK);
	CHECK(!memcmp(&c, &c2, sizeof(c)));
	if (!c.inline_len && !lim.tcp && c.nsge)
		CHECK(!memcmp(sgl, sgl2, c.nsge * sizeof(*sgl)));
	free(w);

	/* The volume rules on top. */
	st = rblk_check_cmd_range(&c, size, bs, p->vol_flags);
	CHECK(st >= 0 && st < RBLK_S__MAX);
	if (st == RBLK_S_OK && c.opcode != RBLK_OP_FLUSH) {
		CHECK(c.offset % bs == 0 && c.length % bs == 0);
		CHECK(c.offset <= size && c.length <= size - c.offset);
		CHECK(c.opcode == RBLK_OP_READ || !(p->vol_flags & RBLK_VOL_F_READ_ONLY));
		CHECK(c.opcode != RBLK_OP_DISCARD || (p->vol_flags & RBLK_VOL_F_DISCARD));
		CHECK(c.opcode != RBLK_OP_WRITE_ZEROES ||
		      (p->vol_flags & RBLK_VOL_F_WRITE_ZEROES));
		CHECK(!(c.flags & RBLK_CMD_F_FUA) || (p->vol_flags & RBLK_VOL_F_FUA));
	}
out:
	free(sgl2);
	free(sgl);
}

static void fuzz_rsp(const uint8_t *b, size_t n)
{
	struct rblk_rsp r, r2;
	uint8_t w[sizeof(struct rblk_wire_rsp)];
	uint32_t length;

	/* The target's receive path hands over the fixed part only. */
	if (n > sizeof(w))
		n = sizeof(w);
	memset(&r, 0, sizeof(r));
	if (rblk_decode_rsp(b, n, &r) != RBLK_S_OK)
		return;
	CHECK(n == sizeof(w));
	CHECK(r.status < RBLK_S__MAX);
	length = get32(b + 4);
	CHECK(length == sizeof(w) ||
	      (r.status == RBLK_S_OK && length - sizeof(w) == r.value));
	rblk_encode_rsp(w, &r, length - sizeof(w));
	memset(&r2, 0, sizeof(r2));
	CHECK(rblk_decode_rsp(w, sizeof(w), &r2) == RBLK_S_OK);
	CHECK(!memcmp(&r, &r2, sizeof(r)));
}

static void fuzz_discover(const uint8_t *b, size_t n)
{
	char host[RBLK_NAME_MAX], host2[RBLK_NAME_MAX];
	uint8_t w[sizeof(struct rblk_wire_discover)];

	if (rblk_decode_discover(b, n, host) != RBLK_S_OK)
		return;
	CHECK(n == sizeof(w));
	CHECK(rblk_name_valid(host) == 0);
	rblk_encode_discover(w, host);
	CHECK(rblk_decode_discover(w, sizeof(w), host2) == RBLK_S_OK);
	CHECK(!strcmp(host, host2));
}

static void fuzz_discover_rsp(const uint8_t *b, size_t n)
{
	const size_t ent = sizeof(struct rblk_wire_discover_entry);
	const size_t fixed = sizeof(struct rblk_wire_discover_rsp);
	struct rblk_discover_entry e, e2;
	uint16_t status = 0, count = 0;
	uint32_t flags = 0;
	uint8_t w[sizeof(struct rblk_wire_discover_entry)];

	/* The client reads the fixed part first, then the entries. */
	if (rblk_decode_discover_rsp(b, n < fixed ? n : fixed, &status,
				     &count, &flags) != RBLK_S_OK)
		return;
	CHECK(count <= RBLK_DISCOVER_MAX);
	CHECK(!(flags & ~RBLK_DISCOVER_F_CUT) && flags == get32(b + 12));
	CHECK(get32(b + 4) == fixed + count * ent);
	{
		uint8_t wr[sizeof(struct rblk_wire_discover_rsp)];
		uint16_t status2 = 0, count2 = 0;
		uint32_t flags2 = 0;

		rblk_encode_discover_rsp(wr, status, count, flags);
		CHECK(rblk_decode_discover_rsp(wr, sizeof(wr), &status2, &count2,
					       &flags2) == RBLK_S_OK);
		CHECK(status2 == status && count2 == count && flags2 == flags);
	}
	for (unsigned i = 0; i < count && fixed + (i + 1) * ent <= n; i++) {
		memset(&e, 0, sizeof(e));
		if (rblk_decode_discover_entry(b + fixed + i * ent, &e) != RBLK_S_OK)
			continue;
		CHECK(rblk_name_valid(e.volume) == 0);
		rblk_encode_discover_entry(w, &e);
		memset(&e2, 0, sizeof(e2));
		CHECK(rblk_decode_discover_entry(w, &e2) == RBLK_S_OK);
		CHECK(!strcmp(e.volume, e2.volume) && e.size == e2.size);
		CHECK(e.vol_flags == e2.vol_flags && e.block_size == e2.block_size);
	}
}

static void fuzz_rdma_cm(const uint8_t *b, size_t n)
{
	struct rblk_rdma_cm p, p2;
	uint8_t w[sizeof(struct rblk_wire_rdma_cm)];

	memset(&p, 0, sizeof(p));
	if (rblk_decode_rdma_cm(b, n, &p) != RBLK_S_OK)
		return;
	CHECK(n >= sizeof(w));
	CHECK(p.status < RBLK_S__MAX);
	CHECK(p.status || (p.queue_depth >= 1 && p.queue_depth <= RBLK_MAX_QUEUE_DEPTH));
	CHECK(rblk_encode_rdma_cm(w, &p) == sizeof(w));
	memset(&p2, 0, sizeof(p2));
	CHECK(rblk_decode_rdma_cm(w, sizeof(w), &p2) == RBLK_S_OK);
	CHECK(!memcmp(&p, &p2, sizeof(p)));
}

static void fuzz_names(const uint8_t *b, size_t n, const struct fz_params *p)
{
	char name[RBLK_NAME_MAX + 1];
	size_t len = n < RBLK_NAME_MAX ? n : RBLK_NAME_MAX;

	memcpy(name, b, len);
	name[len] = '\0';
	if (rblk_name_valid(name) == 0) {
		size_t l = strlen(name);

		CHECK(l >= 1 && l < RBLK_NAME_MAX && name[0] != '-');
		CHECK(strcmp(name, ".") && strcmp(name, ".."));
		CHECK(strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789._-:") == l);
	}
	CHECK(rblk_status_str(p->status - 2) != NULL);
	CHECK(rblk_status_to_errno(p->status) <= 0);
	CHECK(rblk_opcode_str(p->status) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_params p;
	uint8_t *b;
	size_t n;

	if (size < sizeof(p))
		return 0;
	memcpy(&p, data, sizeof(p));
	n = size - sizeof(p);
	b = dup_exact(data + sizeof(p), n);
	fuzz_hdr(b, n);
	fuzz_login(b, n);
	fuzz_login_rsp(b, n);
	fuzz_cmd(b, n, &p);
	fuzz_rsp(b, n);
	fuzz_discover(b, n);
	fuzz_discover_rsp(b, n);
	fuzz_rdma_cm(b, n);
	fuzz_names(b, n, &p);
	free(b);
	return 0;
}
