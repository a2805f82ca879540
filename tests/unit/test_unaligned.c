// SPDX-License-Identifier: MIT
/*
 * PDUs do not arrive aligned: on TCP the next PDU starts wherever the last
 * one ended (a READ with one byte of inline data is 65 bytes long), and
 * RDMA receive buffers are only as aligned as their slot size.  Every
 * encoder and decoder, and the target's PDU dispatch, must read and write
 * at any offset.  This program is built with UBSan's alignment check made
 * fatal (see the Makefile, "alignment regression"), so a decoder that
 * casts a buffer to a wire struct fails here at offset 1..7 instead of in
 * a sanitizer build of the target with a client on the wire.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "conn.h"
#include "rblk_proto.h"

/* 8-aligned, with room for the biggest PDU below at offset 7. */
static uint8_t area[8 + 64 + 16 * RBLK_MAX_SGE + 8192]
	__attribute__((aligned(8)));

static uint8_t *at(unsigned off)
{
	memset(area, 0, sizeof(area));
	return area + off;
}

static void test_hdr_and_login(void **state)
{
	struct rblk_login in = { .queue_id = 2, .queue_depth = 16 }, out;
	uint32_t len;
	uint8_t type;

	strcpy(in.volume, "vol0");
	strcpy(in.host, "host-a");
	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_login(p, &in);

		assert_int_equal(rblk_decode_hdr(p, n, RBLK_MAX_PDU, &type, &len),
				 RBLK_S_OK);
		assert_int_equal(len, n);
		assert_int_equal(rblk_decode_login(p, n, &out), RBLK_S_OK);
		assert_string_equal(out.volume, "vol0");
		assert_int_equal(out.queue_depth, 16);
	}
}

static void test_login_rsp(void **state)
{
	struct rblk_login_rsp in = {
		.status = RBLK_S_OK, .queue_depth = 8, .size = 1 << 20,
		.block_size = 512, .max_io = RBLK_MAX_IO_SIZE,
		.inline_size = 4096, .max_sge = 4, .session_id = 77,
	}, out;

	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_login_rsp(p, &in);

		assert_int_equal(rblk_decode_login_rsp(p, n, &out), RBLK_S_OK);
		assert_int_equal(out.session_id, 77);
	}
}

static void test_cmd_with_sgl_and_inline(void **state)
{
	struct rblk_cmd_limits lim = {
		.queue_depth = 32, .max_io = RBLK_MAX_IO_SIZE,
		.inline_size = 4096, .max_sge = RBLK_MAX_SGE,
	};
	struct rblk_sge sgl[RBLK_MAX_SGE];
	struct rblk_cmd c = { .opcode = RBLK_OP_READ, .nsge = 2, .tag = 3,
			      .offset = 4096, .length = 8192 }, out;

	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		struct rblk_sge s = { .addr = 0x1000, .rkey = 9, .length = 4096 };

		/* READ with two keyed descriptors (RDMA) */
		rblk_encode_cmd(p, &c, 64 + 32);
		rblk_encode_sge(p + 64, &s);
		rblk_encode_sge(p + 80, &s);
		lim.tcp = 0;
		assert_int_equal(rblk_decode_cmd(p, 64 + 32, &lim, &out, sgl),
				 RBLK_S_OK);
		assert_int_equal(out.tag, 3);
		assert_int_equal(sgl[1].rkey, 9);
		/* WRITE with inline data (TCP) */
		c.opcode = RBLK_OP_WRITE;
		c.nsge = 0;
		rblk_encode_cmd(p, &c, 64 + 8192);
		lim.tcp = 1;
		assert_int_equal(rblk_decode_cmd(p, 64 + 8192, &lim, &out, sgl),
				 RBLK_S_OK);
		assert_int_equal(out.inline_len, 8192);
		c.opcode = RBLK_OP_READ;
		c.nsge = 2;
	}
}

static void test_rsp(void **state)
{
	struct rblk_rsp in = { .tag = 5, .status = RBLK_S_OK, .value = 512 }, out;

	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_rsp(p, &in, 512);

		assert_int_equal(rblk_decode_rsp(p, n, &out), RBLK_S_OK);
		assert_int_equal(out.value, 512);
	}
}

static void test_discover(void **state)
{
	struct rblk_discover_entry e = { .size = 1 << 30, .block_size = 4096 }, o;
	char host[RBLK_NAME_MAX];
	uint16_t st, count;

	strcpy(e.volume, "vol1");
	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_discover(p, "host-b");

		assert_int_equal(rblk_decode_discover(p, n, host), RBLK_S_OK);
		assert_string_equal(host, "host-b");
		n = rblk_encode_discover_rsp(p, RBLK_S_OK, 1, 0);
		rblk_encode_discover_entry(p + n, &e);
		assert_int_equal(rblk_decode_discover_rsp(p, n + 80, &st, &count, NULL),
				 RBLK_S_OK);
		assert_int_equal(count, 1);
		assert_int_equal(rblk_decode_discover_entry(p + n, &o), RBLK_S_OK);
		assert_int_equal(o.block_size, 4096);
	}
}

static void test_rdma_cm(void **state)
{
	struct rblk_rdma_cm in = { .queue_id = 1, .queue_depth = 64 }, out;

	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_rdma_cm(p, &in);

		assert_int_equal(rblk_decode_rdma_cm(p, n, &out), RBLK_S_OK);
		assert_int_equal(out.queue_depth, 64);
	}
}

/*
 * The target's dispatch looks at the PDU type before anything else.  A
 * connection that is closing (and not draining) refuses every PDU right
 * after that look, so no reactor is needed to reach it.
 */
static void test_target_dispatch(void **state)
{
	struct rblk_cmd c = { .opcode = RBLK_OP_FLUSH, .tag = 1 };
	struct tgt_conn conn;

	memset(&conn, 0, sizeof(conn));
	conn.state = TGT_CONN_CLOSING;
	for (unsigned off = 0; off < 8; off++) {
		uint8_t *p = at(off);
		size_t n = rblk_encode_cmd(p, &c, 64);

		assert_int_equal(tgt_conn_pdu(&conn, p, n, n), -ECONNABORTED);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_and_login),
		cmocka_unit_test(test_login_rsp),
		cmocka_unit_test(test_cmd_with_sgl_and_inline),
		cmocka_unit_test(test_rsp),
		cmocka_unit_test(test_discover),
		cmocka_unit_test(test_rdma_cm),
		cmocka_unit_test(test_target_dispatch),
	};

	return cmocka_run_group_tests_name("unaligned", tests, NULL, NULL);
}
