// SPDX-License-Identifier: MIT
/*
 * Unit tests for proto/: every encoder round-trips, and every validation
 * rule [Vn] of docs/protocol.md is exercised with a PDU that breaks it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "rblk_proto.h"

#define BS		512u
#define VOL_SIZE	(1u << 20)

static const struct rblk_cmd_limits rdma_lim = {
	.queue_depth = 32, .max_io = RBLK_MAX_IO_SIZE, .inline_size = 4096,
	.max_sge = 4, .tcp = 0, .max_discard = RBLK_DEFAULT_MAX_DISCARD,
	.max_write_zeroes = RBLK_DEFAULT_MAX_WRITE_ZEROES,
};
static const struct rblk_cmd_limits tcp_lim = {
	.queue_depth = 32, .max_io = RBLK_MAX_IO_SIZE, .inline_size = 4096,
	.max_sge = 4, .tcp = 1, .max_discard = RBLK_DEFAULT_MAX_DISCARD,
	.max_write_zeroes = RBLK_DEFAULT_MAX_WRITE_ZEROES,
};

/* Room for a capsule, RBLK_MAX_SGE descriptors and 8 KiB of inline data. */
static uint8_t pdu[64 + 16 * RBLK_MAX_SGE + 8192];

/* Builds a command with nsge descriptors splitting length evenly and
 * inline_len bytes of data; returns the PDU length. */
static size_t build_cmd(uint8_t op, uint8_t flags, uint32_t tag, uint64_t off,
			uint32_t len, unsigned nsge, uint32_t inline_len)
{
	struct rblk_cmd c = {
		.opcode = op, .flags = flags, .nsge = nsge, .tag = tag,
		.offset = off, .length = len,
	};
	size_t total = 64 + 16 * nsge + inline_len;

	memset(pdu, 0, sizeof(pdu));
	rblk_encode_cmd(pdu, &c, total);
	for (unsigned i = 0; i < nsge; i++) {
		struct rblk_sge s = {
			.addr = 0x10000 + i * 0x1000, .rkey = 0x42,
			.length = len / nsge + (i == nsge - 1 ? len % nsge : 0),
		};
		rblk_encode_sge(pdu + 64 + 16 * i, &s);
	}
	memset(pdu + 64 + 16 * nsge, 0xab, inline_len);
	return total;
}

static int decode(size_t len, const struct rblk_cmd_limits *lim,
		  struct rblk_cmd *c)
{
	struct rblk_sge sgl[RBLK_MAX_SGE];

	return rblk_decode_cmd(pdu, len, lim, c, sgl);
}

/* ---- header ------------------------------------------------------------ */

static void test_hdr_ok_and_fields(void **state)
{
	uint8_t type;
	uint32_t len;
	size_t n = build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 1, 0);

	assert_int_equal(rblk_decode_hdr(pdu, n, RBLK_MAX_PDU, &type, &len), RBLK_S_OK);
	assert_int_equal(type, RBLK_PDU_CMD);
	assert_int_equal(len, n);
	/* little-endian on the wire, whatever the host */
	assert_int_equal(pdu[4], n & 0xff);
	assert_int_equal(pdu[5], (n >> 8) & 0xff);
}

static void test_hdr_v1_bad_version(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 1, 0);
	assert_int_equal(pdu[1], 2);	/* version 2: mutual authentication */
	pdu[1] = 3;
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_BAD_VERSION);
	pdu[1] = 1;	/* a version-1 peer cannot do mutual auth: refused */
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_BAD_VERSION);
	pdu[1] = 0;
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_BAD_VERSION);
}

static void test_hdr_v2_bad_type(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 1, 0);
	pdu[0] = 0;
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_OPCODE);
	pdu[0] = 200;
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_OPCODE);
}

static void test_hdr_v3_rsvd(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 1, 0);
	pdu[3] = 1;
	assert_int_equal(rblk_decode_hdr(pdu, 80, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_FIELD);
}

static void test_hdr_v4_short_length(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 0, 0);
	pdu[4] = 63;	/* a CMD is at least 64 bytes */
	pdu[5] = 0;
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_FIELD);
	pdu[4] = 0;
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_FIELD);
}

static void test_hdr_v5_too_long(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 0, 0);
	pdu[4] = 0xff; pdu[5] = 0xff; pdu[6] = 0xff; pdu[7] = 0xff;
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_TOO_LARGE);
	assert_int_equal(len, 0xffffffffu);
	/* exactly at the limit is fine */
	pdu[4] = 0; pdu[5] = 0x10; pdu[6] = 0; pdu[7] = 0;	/* 4096 */
	assert_int_equal(rblk_decode_hdr(pdu, 64, 4096, &type, &len), RBLK_S_OK);
	assert_int_equal(rblk_decode_hdr(pdu, 64, 4095, &type, &len), RBLK_S_TOO_LARGE);
	/* the target's limit is the documented 64 + 16 x max_sge + max_io,
	 * not a rounder number above it */
	assert_int_equal(RBLK_MAX_PDU, 64 + 16 * RBLK_MAX_SGE + RBLK_MAX_IO_SIZE);
	build_cmd(RBLK_OP_WRITE, 0, 1, 0, 4096, 0, 0);
	pdu[4] = RBLK_MAX_PDU & 0xff; pdu[5] = (RBLK_MAX_PDU >> 8) & 0xff;
	pdu[6] = (RBLK_MAX_PDU >> 16) & 0xff; pdu[7] = 0;
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len), RBLK_S_OK);
	pdu[4]++;
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len), RBLK_S_TOO_LARGE);
	pdu[4] = 0; pdu[5] = 0x10; pdu[6] = 0x10;	/* 1 MiB + 4 KiB */
	assert_int_equal(rblk_decode_hdr(pdu, 64, RBLK_MAX_PDU, &type, &len), RBLK_S_TOO_LARGE);
}

static void test_hdr_v6_truncated(void **state)
{
	uint8_t type;
	uint32_t len;

	build_cmd(RBLK_OP_READ, 0, 1, 0, 4096, 0, 0);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(rblk_decode_hdr(pdu, i, RBLK_MAX_PDU, &type, &len),
				 RBLK_S_INVALID_FIELD);
}

/* ---- LOGIN ------------------------------------------------------------- */

static size_t build_login(const char *vol, const char *host, uint16_t depth)
{
	struct rblk_login l = { .queue_id = 3, .queue_depth = depth };

	strcpy(l.volume, vol);
	strcpy(l.host, host);
	memset(pdu, 0, sizeof(pdu));
	return rblk_encode_login(pdu, &l);
}

static void test_login_roundtrip(void **state)
{
	struct rblk_login l;
	size_t n = build_login("vol0", "client-1.example", 128);

	assert_int_equal(n, 216);
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_OK);
	assert_string_equal(l.volume, "vol0");
	assert_string_equal(l.host, "client-1.example");
	assert_int_equal(l.queue_id, 3);
	assert_int_equal(l.queue_depth, 128);
	assert_false(l.has_mac);
	pdu[152] = 1;
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_OK);
	assert_true(l.has_mac);
	/* With a MAC, bytes 184..215 are the initiator's nonce. */
	pdu[184] = 0xaa;
	pdu[215] = 0x55;
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_OK);
	assert_int_equal(l.ini_nonce[0], 0xaa);
	assert_int_equal(l.ini_nonce[31], 0x55);
}

static void test_login_v7_magic(void **state)
{
	struct rblk_login l;
	size_t n = build_login("vol0", "h", 1);

	pdu[8] ^= 1;
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
}

static void test_login_v8_zero_depth(void **state)
{
	struct rblk_login l;
	size_t n = build_login("vol0", "h", 0);

	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
}

/* Flags, rsvd, and an initiator nonce without the MAC it belongs to. */
static void test_login_v9_flags_and_reserved(void **state)
{
	struct rblk_login l;
	size_t offs[] = { 16, 19, 20, 23, 184, 215 };

	for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
		size_t n = build_login("vol0", "h", 1);

		pdu[offs[i]] = 0x80;
		assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
	}
}

static void test_login_v10_names(void **state)
{
	struct rblk_login l;
	const char *bad[] = { "", ".", "..", "a/b", "../etc", "-x", "a b",
			      "tab\there", "ctl\x01", "\xff" };
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = build_login("vol0", "h", 1);
		memset(pdu + 24, 0, 64);
		memcpy(pdu + 24, bad[i], strlen(bad[i]));
		assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
		n = build_login("vol0", "h", 1);
		memset(pdu + 88, 0, 64);
		memcpy(pdu + 88, bad[i], strlen(bad[i]));
		assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
	}
	/* a name filling all 64 bytes has no NUL */
	n = build_login("vol0", "h", 1);
	memset(pdu + 24, 'a', 64);
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
	/* 63 bytes is the longest valid name */
	n = build_login("vol0", "h", 1);
	memset(pdu + 24, 'a', 63);
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_OK);
}

/* [V32] bytes after a name's NUL: "vol0\0junk" is not "vol0" */
static void test_names_v32_padding(void **state)
{
	struct rblk_discover_entry e = { .size = 1 << 20, .block_size = 512 }, o;
	const unsigned login_fields[] = { 24, 88 };
	struct rblk_login l;
	char host[RBLK_NAME_MAX];
	size_t n;

	for (unsigned i = 0; i < 2; i++) {
		n = build_login("vol0", "h", 1);
		memcpy(pdu + login_fields[i] + 5, "junk", 4);
		assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
		/* the very last byte of the field counts too */
		n = build_login("vol0", "h", 1);
		pdu[login_fields[i] + RBLK_NAME_MAX - 1] = 'x';
		assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_FIELD);
	}
	n = rblk_encode_discover(pdu, "node-7");
	pdu[16 + 7] = 'x';
	assert_int_equal(rblk_decode_discover(pdu, n, host), RBLK_S_INVALID_FIELD);
	strcpy(e.volume, "vol0");
	rblk_encode_discover_entry(pdu, &e);
	assert_int_equal(rblk_decode_discover_entry(pdu, &o), RBLK_S_OK);
	pdu[RBLK_NAME_MAX - 1] = 1;
	assert_int_equal(rblk_decode_discover_entry(pdu, &o), RBLK_S_INVALID_FIELD);
}

static void test_login_v11_length(void **state)
{
	struct rblk_login l;
	size_t n = build_login("vol0", "h", 1);

	/* header claims 217 bytes and 217 are there */
	pdu[4] = 217;
	assert_int_equal(rblk_decode_login(pdu, n + 1, &l), RBLK_S_INVALID_FIELD);
	/* header and buffer disagree */
	pdu[4] = 216;
	assert_int_equal(rblk_decode_login(pdu, n - 1, &l), RBLK_S_INVALID_FIELD);
	/* another PDU type is not a LOGIN */
	pdu[0] = RBLK_PDU_DISCOVER;
	assert_int_equal(rblk_decode_login(pdu, n, &l), RBLK_S_INVALID_OPCODE);
}

/* ---- LOGIN_RSP --------------------------------------------------------- */

static struct rblk_login_rsp good_rsp(void)
{
	struct rblk_login_rsp r = {
		.status = RBLK_S_OK, .queue_depth = 128,
		.vol_flags = RBLK_VOL_F_FLUSH | RBLK_VOL_F_DISCARD,
		.size = 1ull << 30, .block_size = 512, .max_io = 1 << 20,
		.inline_size = 4096, .max_sge = 16, .session_id = 77,
		.max_discard = 1u << 30,
	};
	return r;
}

static void test_login_rsp_roundtrip(void **state)
{
	struct rblk_login_rsp in = good_rsp(), out;
	size_t n;

	for (unsigned i = 0; i < RBLK_UUID_LEN; i++)
		in.vol_uuid[i] = (uint8_t)(0xa0 + i);
	n = rblk_encode_login_rsp(pdu, &in);
	assert_int_equal(n, 112);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_OK);
	assert_int_equal(out.size, in.size);
	assert_int_equal(out.queue_depth, 128);
	assert_int_equal(out.vol_flags, in.vol_flags);
	assert_int_equal(out.max_io, in.max_io);
	assert_int_equal(out.inline_size, 4096);
	assert_int_equal(out.max_sge, 16);
	assert_int_equal(out.session_id, 77);
	assert_int_equal(out.max_discard, 1u << 30);
	assert_int_equal(out.max_write_zeroes, 0);
	/* the limits sit in what was rsvd2, little-endian */
	assert_int_equal(pdu[80], 0);
	assert_int_equal(pdu[83], 0x40);
	/* the volume's identity: the last 16 bytes, as sent */
	assert_memory_equal(out.vol_uuid, in.vol_uuid, RBLK_UUID_LEN);
	assert_int_equal(pdu[96], 0xa0);
	assert_int_equal(pdu[111], 0xaf);
}

/* [V34] a limit is a block multiple >= one block when its command is
 * offered and 0 when not; the 8 bytes left of rsvd2 are zero. */
static void test_login_rsp_v34_range_limits(void **state)
{
	struct rblk_login_rsp out, r;
	size_t n;

	r = good_rsp(); r.max_discard = 0;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.max_discard = 256;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.max_discard = 4096 + 256;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.max_write_zeroes = 4096;	/* not offered */
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.vol_flags |= RBLK_VOL_F_WRITE_ZEROES;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r.max_write_zeroes = 512;			/* one block is enough */
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_OK);
	assert_int_equal(out.max_write_zeroes, 512);
	r.max_write_zeroes = 0xfffffe00u;		/* the largest that fits */
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_OK);
	pdu[95] = 1;
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* a refusal carries no limits and is not checked for them */
	memset(&r, 0, sizeof(r));
	r.status = RBLK_S_ACCESS_DENIED;
	r.vol_flags = RBLK_VOL_F_DISCARD;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_OK);
}

static void test_login_rsp_v12_geometry(void **state)
{
	struct rblk_login_rsp out, r;
	size_t n;

	r = good_rsp(); r.block_size = 1024;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.size = 1000;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.queue_depth = 0;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.queue_depth = 1025;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.max_io = 2 << 20;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.max_sge = 0;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	r = good_rsp(); r.vol_flags = 1u << 7;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* a refusal carries no geometry and is not checked for one */
	memset(&r, 0, sizeof(r));
	r.status = RBLK_S_NO_SUCH_VOLUME;
	n = rblk_encode_login_rsp(pdu, &r);
	assert_int_equal(rblk_decode_login_rsp(pdu, n, &out), RBLK_S_OK);
	assert_int_equal(out.status, RBLK_S_NO_SUCH_VOLUME);
}

/* ---- CMD --------------------------------------------------------------- */

static void test_cmd_roundtrip_rdma(void **state)
{
	struct rblk_cmd c;
	struct rblk_sge sgl[RBLK_MAX_SGE];
	size_t n = build_cmd(RBLK_OP_WRITE, RBLK_CMD_F_FUA, 31, 8192, 3 * 4096, 3, 0);

	assert_int_equal(rblk_decode_cmd(pdu, n, &rdma_lim, &c, sgl), RBLK_S_OK);
	assert_int_equal(c.opcode, RBLK_OP_WRITE);
	assert_int_equal(c.flags, RBLK_CMD_F_FUA);
	assert_int_equal(c.tag, 31);
	assert_int_equal(c.offset, 8192);
	assert_int_equal(c.length, 3 * 4096);
	assert_int_equal(c.nsge, 3);
	assert_int_equal(c.inline_len, 0);
	assert_int_equal(sgl[1].addr, 0x11000);
	assert_int_equal(sgl[1].rkey, 0x42);
	assert_int_equal(sgl[2].length, 4096);
}

static void test_cmd_inline_and_tcp(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 4096, 0, 4096);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_OK);
	assert_int_equal(c.inline_len, 4096);
	/* TCP: any WRITE size rides in-band; READ has no SGL */
	n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 8192, 0, 8192);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 1 << 20, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
	n = build_cmd(RBLK_OP_FLUSH, 0, 0, 0, 0, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
	n = build_cmd(RBLK_OP_DISCARD, 0, 0, 0, RBLK_DEFAULT_MAX_DISCARD, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
}

static void test_cmd_v13_tag_range(void **state)
{
	struct rblk_cmd c;
	size_t n = build_cmd(RBLK_OP_READ, 0, 32, 0, 4096, 1, 0);

	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_BAD_TAG);
	assert_int_equal(c.tag, 32);	/* so the error can be answered */
	n = build_cmd(RBLK_OP_READ, 0, 0xffffffffu, 0, 4096, 1, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_BAD_TAG);
}

static void test_cmd_v15_opcode(void **state)
{
	struct rblk_cmd c;
	uint8_t ops[] = { 0, 6, 0x7f, 0xff };

	for (size_t i = 0; i < sizeof(ops); i++) {
		size_t n = build_cmd(ops[i], 0, 0, 0, 4096, 1, 0);

		assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_OPCODE);
	}
}

static void test_cmd_v16_flags(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_READ, RBLK_CMD_F_FUA, 0, 0, 4096, 1, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_FLUSH, RBLK_CMD_F_FUA, 0, 0, 0, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_DISCARD, RBLK_CMD_F_FUA, 0, 0, 4096, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE, 0x80, 0, 0, 4096, 1, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE_ZEROES, RBLK_CMD_F_FUA, 0, 0, 4096, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_OK);
}

static void test_cmd_v17_reserved(void **state)
{
	struct rblk_cmd c;

	for (size_t off = 28; off < 64; off++) {
		size_t n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 1, 0);

		pdu[off] = 1;
		assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	}
}

static void test_cmd_v18_nsge_limit(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 5 * 4096, 5, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_TOO_LARGE);
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 1, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_TOO_LARGE);
}

static void test_cmd_v19_short_sgl(void **state)
{
	struct rblk_cmd c;
	size_t n = build_cmd(RBLK_OP_READ, 0, 0, 0, 8192, 2, 0);

	/* the PDU claims 2 descriptors but carries only one */
	pdu[4] = 80;
	assert_int_equal(decode(n - 16, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	/* nsge = 65535 on a 64-byte PDU */
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 0, 0);
	pdu[10] = 0xff; pdu[11] = 0xff;
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_TOO_LARGE);
}

static void test_cmd_v20_flush_fields(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_FLUSH, 0, 0, 0, 4096, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_FLUSH, 0, 0, 0, 0, 1, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_FLUSH, 0, 0, 0, 0, 0, 512);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
}

static void test_cmd_v21_discard_fields(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_DISCARD, 0, 0, 0, 0, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE_ZEROES, 0, 0, 0, 4096, 1, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_DISCARD, 0, 0, 0, 512, 0, 512);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
}

static void test_cmd_v22_length(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 0, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, RBLK_MAX_IO_SIZE + 512, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_TOO_LARGE);
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, RBLK_MAX_IO_SIZE, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
}

/* [V34] DISCARD / WRITE_ZEROES above the LOGIN_RSP limit: TOO_LARGE on
 * the command's tag (the connection stays up). */
static void test_cmd_v34_range_length(void **state)
{
	struct rblk_cmd_limits lim = tcp_lim;
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_DISCARD, 0, 3, 0, RBLK_DEFAULT_MAX_DISCARD, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_OK);
	n = build_cmd(RBLK_OP_DISCARD, 0, 3, 0, RBLK_DEFAULT_MAX_DISCARD + 512, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_TOO_LARGE);
	assert_int_equal(c.tag, 3);
	n = build_cmd(RBLK_OP_WRITE_ZEROES, 0, 0, 0,
		      RBLK_DEFAULT_MAX_WRITE_ZEROES, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_OK);
	n = build_cmd(RBLK_OP_WRITE_ZEROES, RBLK_CMD_F_FUA, 0, 0,
		      RBLK_DEFAULT_MAX_WRITE_ZEROES + 512, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_TOO_LARGE);
	/* 4 GiB - 512: the largest the length field holds */
	n = build_cmd(RBLK_OP_WRITE_ZEROES, 0, 0, 0, 0xfffffe00u, 0, 0);
	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_TOO_LARGE);
	/* each opcode has its own limit */
	lim.max_discard = 4096;
	n = build_cmd(RBLK_OP_DISCARD, 0, 0, 0, 8192, 0, 0);
	assert_int_equal(decode(n, &lim, &c), RBLK_S_TOO_LARGE);
	n = build_cmd(RBLK_OP_WRITE_ZEROES, 0, 0, 0, 8192, 0, 0);
	assert_int_equal(decode(n, &lim, &c), RBLK_S_OK);
	/* [V21] still comes first */
	n = build_cmd(RBLK_OP_DISCARD, 0, 0, 0, 8192, 0, 8192);
	assert_int_equal(decode(n, &lim, &c), RBLK_S_INVALID_FIELD);
	/* 0 in the limits: unbounded (test clients) */
	lim.max_write_zeroes = 0;
	n = build_cmd(RBLK_OP_WRITE_ZEROES, 0, 0, 0, 0xfffffe00u, 0, 0);
	assert_int_equal(decode(n, &lim, &c), RBLK_S_OK);
}

static void test_cmd_v23_inline_rules(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 512, 0, 512);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 1024, 1, 512);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 1024, 0, 512);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 8192, 0, 8192);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_TOO_LARGE);
}

static void test_cmd_v24_tcp_write_needs_data(void **state)
{
	struct rblk_cmd c;
	size_t n = build_cmd(RBLK_OP_WRITE, 0, 0, 0, 4096, 0, 0);

	assert_int_equal(decode(n, &tcp_lim, &c), RBLK_S_INVALID_FIELD);
}

static void test_cmd_v25_sgl_rules(void **state)
{
	struct rblk_cmd c;
	size_t n;

	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 0, 0);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	/* descriptors adding up to less than length */
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 8192, 2, 0);
	pdu[64 + 16 + 12] = 0; pdu[64 + 16 + 13] = 0x08;	/* 2048 */
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	/* a zero-length descriptor */
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 8192, 2, 0);
	memset(pdu + 64 + 12, 0, 4);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	/* lengths whose 32-bit sum would wrap to length */
	n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 2, 0);
	memset(pdu + 64 + 12, 0xff, 4);			/* 0xffffffff */
	pdu[64 + 16 + 12] = 0x01; pdu[64 + 16 + 13] = 0x10;	/* 0x1001 */
	memset(pdu + 64 + 16 + 14, 0, 2);
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
}

static void test_cmd_wrong_pdu(void **state)
{
	struct rblk_cmd c;
	size_t n = build_cmd(RBLK_OP_READ, 0, 0, 0, 4096, 1, 0);

	pdu[0] = RBLK_PDU_RSP;		/* a valid PDU, but not a command */
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_OPCODE);
	pdu[0] = RBLK_PDU_LOGIN;	/* and too short to be a LOGIN */
	assert_int_equal(decode(n, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
	pdu[0] = RBLK_PDU_CMD;
	assert_int_equal(decode(n + 1, &rdma_lim, &c), RBLK_S_INVALID_FIELD);
}

/* ---- volume rules -------------------------------------------------------- */

static struct rblk_cmd mk(uint8_t op, uint8_t flags, uint64_t off, uint32_t len)
{
	struct rblk_cmd c = { .opcode = op, .flags = flags, .offset = off, .length = len };
	return c;
}

static void test_range_flush_never_checked(void **state)
{
	struct rblk_cmd c = mk(RBLK_OP_FLUSH, 0, UINT64_MAX, 0);

	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, RBLK_VOL_F_READ_ONLY),
			 RBLK_S_OK);
}

static void test_range_v26_read_only(void **state)
{
	const uint32_t f = RBLK_VOL_F_READ_ONLY | RBLK_VOL_F_DISCARD |
			   RBLK_VOL_F_WRITE_ZEROES | RBLK_VOL_F_FUA;
	uint8_t ops[] = { RBLK_OP_WRITE, RBLK_OP_DISCARD, RBLK_OP_WRITE_ZEROES };
	struct rblk_cmd c;

	for (size_t i = 0; i < sizeof(ops); i++) {
		c = mk(ops[i], 0, 0, 4096);
		assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, f), RBLK_S_READ_ONLY);
	}
	c = mk(RBLK_OP_READ, 0, 0, 4096);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, f), RBLK_S_OK);
}

static void test_range_v27_not_supported(void **state)
{
	struct rblk_cmd c;

	c = mk(RBLK_OP_DISCARD, 0, 0, 4096);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_NOT_SUPPORTED);
	c = mk(RBLK_OP_WRITE_ZEROES, 0, 0, 4096);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_NOT_SUPPORTED);
	c = mk(RBLK_OP_WRITE, RBLK_CMD_F_FUA, 0, 4096);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_NOT_SUPPORTED);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, RBLK_VOL_F_FUA), RBLK_S_OK);
}

static void test_range_v28_alignment(void **state)
{
	struct rblk_cmd c;

	c = mk(RBLK_OP_READ, 0, 100, 512);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_MISALIGNED);
	c = mk(RBLK_OP_READ, 0, 0, 513);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_MISALIGNED);
	c = mk(RBLK_OP_READ, 0, 512, 512);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, 4096, 0), RBLK_S_MISALIGNED);
}

static void test_range_v29_bounds(void **state)
{
	struct rblk_cmd c;

	c = mk(RBLK_OP_READ, 0, VOL_SIZE - 512, 512);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_OK);
	c = mk(RBLK_OP_READ, 0, VOL_SIZE - 512, 1024);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_OUT_OF_RANGE);
	c = mk(RBLK_OP_READ, 0, VOL_SIZE, 512);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_OUT_OF_RANGE);
	/* would wrap around 2^64 if added naively */
	c = mk(RBLK_OP_WRITE, 0, UINT64_MAX - 511, 1024);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, 0), RBLK_S_OUT_OF_RANGE);
	c = mk(RBLK_OP_DISCARD, 0, 0, VOL_SIZE + 512);
	assert_int_equal(rblk_check_cmd_range(&c, VOL_SIZE, BS, RBLK_VOL_F_DISCARD),
			 RBLK_S_OUT_OF_RANGE);
}

/* ---- RSP ----------------------------------------------------------------- */

static void test_rsp_roundtrip(void **state)
{
	struct rblk_rsp in = { .tag = 9, .status = RBLK_S_OK, .value = 4096 }, out;
	size_t n = rblk_encode_rsp(pdu, &in, 4096);

	assert_int_equal(n, 24);
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_OK);
	assert_int_equal(out.tag, 9);
	assert_int_equal(out.value, 4096);
	in.status = RBLK_S_OUT_OF_RANGE; in.value = 0;
	n = rblk_encode_rsp(pdu, &in, 0);
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_OK);
	assert_int_equal(out.status, RBLK_S_OUT_OF_RANGE);
}

static void test_rsp_v30_lies(void **state)
{
	struct rblk_rsp in = { .tag = 1, .status = RBLK_S_IO_ERROR }, out;
	size_t n;

	/* data after a failed status */
	n = rblk_encode_rsp(pdu, &in, 512);
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* data length other than value */
	in.status = RBLK_S_OK; in.value = 1024;
	n = rblk_encode_rsp(pdu, &in, 512);
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* unknown status */
	in.status = RBLK_S__MAX; in.value = 0;
	n = rblk_encode_rsp(pdu, &in, 0);
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* reserved */
	in.status = RBLK_S_OK;
	n = rblk_encode_rsp(pdu, &in, 0);
	pdu[14] = 1;
	assert_int_equal(rblk_decode_rsp(pdu, n, &out), RBLK_S_INVALID_FIELD);
	/* truncated */
	assert_int_equal(rblk_decode_rsp(pdu, 23, &out), RBLK_S_INVALID_FIELD);
}

/* ---- DISCOVER ------------------------------------------------------------ */

static void test_discover_roundtrip(void **state)
{
	char host[RBLK_NAME_MAX];
	struct rblk_discover_entry e = { .size = 1 << 30, .vol_flags = 3, .block_size = 512 }, o;
	uint16_t st, count;
	size_t n = rblk_encode_discover(pdu, "node-7");

	assert_int_equal(n, 80);
	assert_int_equal(rblk_decode_discover(pdu, n, host), RBLK_S_OK);
	assert_string_equal(host, "node-7");
	pdu[8] = 0;	/* magic */
	assert_int_equal(rblk_decode_discover(pdu, n, host), RBLK_S_INVALID_FIELD);

	n = rblk_encode_discover_rsp(pdu, RBLK_S_OK, 2, 0);
	strcpy(e.volume, "a");
	n += rblk_encode_discover_entry(pdu + n, &e);
	strcpy(e.volume, "b");
	n += rblk_encode_discover_entry(pdu + n, &e);
	assert_int_equal(n, 16 + 160);
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, NULL), RBLK_S_OK);
	assert_int_equal(count, 2);
	assert_int_equal(rblk_decode_discover_entry(pdu + 96, &o), RBLK_S_OK);
	assert_string_equal(o.volume, "b");
	assert_int_equal(o.size, 1 << 30);
}

static void test_discover_v31_count(void **state)
{
	uint16_t st, count;
	size_t n = rblk_encode_discover_rsp(pdu, RBLK_S_OK, 3, 0);

	/* count says 3, length says 3 — but claim 257 entries */
	pdu[10] = 0x01; pdu[11] = 0x01;
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, NULL), RBLK_S_INVALID_FIELD);
	/* count and length disagree */
	n = rblk_encode_discover_rsp(pdu, RBLK_S_OK, 3, 0);
	pdu[10] = 2;
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, NULL), RBLK_S_INVALID_FIELD);
}

/* A list cut at RBLK_DISCOVER_MAX says so in flags; other bits are refused. */
static void test_discover_rsp_flags(void **state)
{
	uint16_t st, count;
	uint32_t flags = 7;
	size_t n = rblk_encode_discover_rsp(pdu, RBLK_S_OK, 0, 0);

	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, &flags), RBLK_S_OK);
	assert_int_equal(flags, 0);
	n = rblk_encode_discover_rsp(pdu, RBLK_S_OK, 0, RBLK_DISCOVER_F_CUT);
	assert_int_equal(pdu[12], 1);
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, &flags), RBLK_S_OK);
	assert_int_equal(flags, RBLK_DISCOVER_F_CUT);
	pdu[12] = 2;
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, &flags),
			 RBLK_S_INVALID_FIELD);
	pdu[12] = 0;
	pdu[15] = 0x80;
	assert_int_equal(rblk_decode_discover_rsp(pdu, n, &st, &count, NULL),
			 RBLK_S_INVALID_FIELD);
}

/* ---- names and strings ---------------------------------------------------- */

/* [V33] KEEPALIVE (24 bytes) / KEEPALIVE_RSP (32, or 24 from an older
 * target): reserved zero, status rules, the size the answer carries. */
static void test_keepalive_v33(void **state)
{
	uint8_t ka[sizeof(struct rblk_wire_keepalive_rsp)];
	uint8_t type;
	uint32_t len;
	uint16_t st;
	uint64_t seq, size;

	assert_int_equal(rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE, 0, 77, 0), 24);
	/* little-endian seq at offset 16 */
	assert_int_equal(ka[16], 77);
	assert_int_equal(rblk_decode_hdr(ka, 24, RBLK_MAX_PDU, &type, &len), RBLK_S_OK);
	assert_int_equal(type, RBLK_PDU_KEEPALIVE);
	assert_int_equal(rblk_decode_keepalive(ka, 24, RBLK_PDU_KEEPALIVE, &st, &seq, NULL),
			 RBLK_S_OK);
	assert_int_equal(seq, 77);
	assert_int_equal(st, RBLK_S_OK);
	/* the other direction's type is not this one */
	assert_int_equal(rblk_decode_keepalive(ka, 24, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, NULL),
			 RBLK_S_INVALID_OPCODE);
	/* a KEEPALIVE carries no status */
	rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE, RBLK_S_SHUTTING_DOWN, 1, 0);
	assert_int_equal(rblk_decode_keepalive(ka, 24, RBLK_PDU_KEEPALIVE, &st, &seq, NULL),
			 RBLK_S_INVALID_FIELD);
	/* nor 32 bytes */
	rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE, 0, 1, 0);
	memset(ka + 24, 0, 8);
	ka[4] = 32;
	assert_int_equal(rblk_decode_keepalive(ka, 32, RBLK_PDU_KEEPALIVE, &st, &seq, NULL),
			 RBLK_S_INVALID_FIELD);
	/* a KEEPALIVE_RSP is 32 bytes, the size little-endian at 24; it may
	 * say SHUTTING_DOWN, not an unknown status */
	assert_int_equal(rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE_RSP,
					       RBLK_S_SHUTTING_DOWN, 0, 1ull << 40), 32);
	assert_int_equal(ka[4], 32);
	assert_int_equal(ka[29], 1);
	assert_int_equal(rblk_decode_keepalive(ka, 32, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, &size),
			 RBLK_S_OK);
	assert_int_equal(st, RBLK_S_SHUTTING_DOWN);
	assert_int_equal(size, 1ull << 40);
	/* 24 bytes: a target from before the size field, which says none */
	ka[4] = 24;
	assert_int_equal(rblk_decode_keepalive(ka, 24, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, &size),
			 RBLK_S_OK);
	assert_int_equal(size, 0);
	ka[4] = 32;
	ka[8] = RBLK_S__MAX;
	assert_int_equal(rblk_decode_keepalive(ka, 32, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, NULL),
			 RBLK_S_INVALID_FIELD);
	/* reserved fields */
	rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE_RSP, 0, 3, 4096);
	ka[12] = 1;
	assert_int_equal(rblk_decode_keepalive(ka, 32, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, NULL),
			 RBLK_S_INVALID_FIELD);
	ka[12] = 0;
	ka[10] = 1;
	assert_int_equal(rblk_decode_keepalive(ka, 32, RBLK_PDU_KEEPALIVE_RSP, &st, &seq, NULL),
			 RBLK_S_INVALID_FIELD);
	ka[10] = 0;
	/* length: shorter than 24 fails the header, any other the decoder */
	ka[4] = 16;
	assert_int_equal(rblk_decode_hdr(ka, 32, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_FIELD);
	{
		uint8_t big[40] = { 0 };

		rblk_encode_keepalive(big, RBLK_PDU_KEEPALIVE_RSP, 0, 3, 4096);
		big[4] = 40;
		assert_int_equal(rblk_decode_keepalive(big, 40, RBLK_PDU_KEEPALIVE_RSP,
						       &st, &seq, NULL), RBLK_S_INVALID_FIELD);
		big[4] = 28;
		assert_int_equal(rblk_decode_keepalive(big, 28, RBLK_PDU_KEEPALIVE_RSP,
						       &st, &seq, NULL), RBLK_S_INVALID_FIELD);
	}
	/* the first unused type is still unknown */
	ka[0] = RBLK_PDU_KEEPALIVE_RSP + 1;
	ka[4] = 24;
	assert_int_equal(rblk_decode_hdr(ka, 24, RBLK_MAX_PDU, &type, &len),
			 RBLK_S_INVALID_OPCODE);
}

static void test_names(void **state)
{
	char long_name[RBLK_NAME_MAX + 1];

	assert_int_equal(rblk_name_valid("vol-0_a.b:c"), 0);
	assert_int_equal(rblk_name_valid("a/b"), -EINVAL);
	assert_int_equal(rblk_name_valid(".."), -EINVAL);
	assert_int_equal(rblk_name_valid(""), -EINVAL);
	assert_int_equal(rblk_name_valid("new\nline"), -EINVAL);
	memset(long_name, 'x', RBLK_NAME_MAX);
	long_name[RBLK_NAME_MAX] = 0;
	assert_int_equal(rblk_name_valid(long_name), -EINVAL);
	long_name[RBLK_NAME_MAX - 1] = 0;
	assert_int_equal(rblk_name_valid(long_name), 0);
}

static void test_status_strings(void **state)
{
	for (int s = 0; s < RBLK_S__MAX; s++) {
		assert_string_not_equal(rblk_status_str(s), "unknown status");
		if (s != RBLK_S_OK)
			assert_true(rblk_status_to_errno(s) < 0);
	}
	assert_string_equal(rblk_status_str(RBLK_S__MAX), "unknown status");
	assert_string_equal(rblk_status_str(-1), "unknown status");
	assert_int_equal(rblk_status_to_errno(RBLK_S_READ_ONLY), -EROFS);
	assert_string_equal(rblk_opcode_str(RBLK_OP_WRITE_ZEROES), "WRITE_ZEROES");
	assert_string_equal(rblk_opcode_str(99), "?");
}

/* Random bytes never crash a decoder, and never decode a CMD whose fields
 * break the limits (a poor man's fuzz pass; the seed is fixed so a failure
 * is reproducible). */
static void test_random_garbage(void **state)
{
	struct rblk_cmd c;
	struct rblk_sge sgl[RBLK_MAX_SGE];
	struct rblk_login l;
	struct rblk_login_rsp lr;
	struct rblk_rsp r;
	uint8_t type;
	uint32_t len;

	srand(12345);
	for (int iter = 0; iter < 200000; iter++) {
		size_t n = (size_t)(rand() % 400);

		for (size_t i = 0; i < n; i++)
			pdu[i] = rand();
		if (iter & 1) {		/* make the header plausible half the time */
			pdu[0] = 1 + rand() % 6;
			pdu[1] = RBLK_PROTO_VERSION;
			pdu[2] = pdu[3] = 0;
			pdu[4] = n & 0xff; pdu[5] = n >> 8; pdu[6] = pdu[7] = 0;
		}
		rblk_decode_hdr(pdu, n, RBLK_MAX_PDU, &type, &len);
		rblk_decode_login(pdu, n, &l);
		rblk_decode_login_rsp(pdu, n, &lr);
		rblk_decode_rsp(pdu, n, &r);
		if (rblk_decode_cmd(pdu, n, &rdma_lim, &c, sgl) == RBLK_S_OK) {
			assert_true(c.tag < rdma_lim.queue_depth);
			assert_true(c.nsge <= rdma_lim.max_sge);
			assert_true(c.length <= (c.opcode == RBLK_OP_DISCARD ?
				rdma_lim.max_discard : c.opcode == RBLK_OP_WRITE_ZEROES ?
				rdma_lim.max_write_zeroes : rdma_lim.max_io));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_ok_and_fields),
		cmocka_unit_test(test_hdr_v1_bad_version),
		cmocka_unit_test(test_hdr_v2_bad_type),
		cmocka_unit_test(test_hdr_v3_rsvd),
		cmocka_unit_test(test_hdr_v4_short_length),
		cmocka_unit_test(test_hdr_v5_too_long),
		cmocka_unit_test(test_hdr_v6_truncated),
		cmocka_unit_test(test_login_roundtrip),
		cmocka_unit_test(test_login_v7_magic),
		cmocka_unit_test(test_login_v8_zero_depth),
		cmocka_unit_test(test_login_v9_flags_and_reserved),
		cmocka_unit_test(test_login_v10_names),
		cmocka_unit_test(test_names_v32_padding),
		cmocka_unit_test(test_login_v11_length),
		cmocka_unit_test(test_login_rsp_roundtrip),
		cmocka_unit_test(test_login_rsp_v12_geometry),
		cmocka_unit_test(test_login_rsp_v34_range_limits),
		cmocka_unit_test(test_cmd_roundtrip_rdma),
		cmocka_unit_test(test_cmd_inline_and_tcp),
		cmocka_unit_test(test_cmd_v13_tag_range),
		cmocka_unit_test(test_cmd_v15_opcode),
		cmocka_unit_test(test_cmd_v16_flags),
		cmocka_unit_test(test_cmd_v17_reserved),
		cmocka_unit_test(test_cmd_v18_nsge_limit),
		cmocka_unit_test(test_cmd_v19_short_sgl),
		cmocka_unit_test(test_cmd_v20_flush_fields),
		cmocka_unit_test(test_cmd_v21_discard_fields),
		cmocka_unit_test(test_cmd_v22_length),
		cmocka_unit_test(test_cmd_v34_range_length),
		cmocka_unit_test(test_cmd_v23_inline_rules),
		cmocka_unit_test(test_cmd_v24_tcp_write_needs_data),
		cmocka_unit_test(test_cmd_v25_sgl_rules),
		cmocka_unit_test(test_cmd_wrong_pdu),
		cmocka_unit_test(test_range_flush_never_checked),
		cmocka_unit_test(test_range_v26_read_only),
		cmocka_unit_test(test_range_v27_not_supported),
		cmocka_unit_test(test_range_v28_alignment),
		cmocka_unit_test(test_range_v29_bounds),
		cmocka_unit_test(test_rsp_roundtrip),
		cmocka_unit_test(test_rsp_v30_lies),
		cmocka_unit_test(test_discover_roundtrip),
		cmocka_unit_test(test_discover_v31_count),
		cmocka_unit_test(test_discover_rsp_flags),
		cmocka_unit_test(test_keepalive_v33),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_status_strings),
		cmocka_unit_test(test_random_garbage),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
