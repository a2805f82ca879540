// SPDX-License-Identifier: MIT
/*
 * ublk batch I/O commands (initiator/ublk_batch.c) as the kernel reads
 * them: the SQEs' fields and command area, the elements, the provided
 * buffers of FETCH and the commit slots.  On a real io_uring of this host
 * (its kernel has provided buffer rings but no ublk): nothing is
 * submitted.  The kernel's side runs in the VM (suite-ublk on 7.3.4).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../initiator/ublk_batch.h"

#define DEPTH		8
#define BUF_BYTES	4096
#define CDEV_FD		42	/* never used: nothing is submitted */

struct fixture {
	struct io_uring ring;
	struct ini_batch b;
	char bufs[DEPTH * BUF_BYTES];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || io_uring_queue_init(16, &f->ring, 0))
		return -1;
	if (ini_batch_init(&f->b, &f->ring, CDEV_FD, 3, DEPTH, f->bufs, BUF_BYTES)) {
		io_uring_queue_exit(&f->ring);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ini_batch_exit(&f->b);
	io_uring_queue_exit(&f->ring);
	free(f);
	return 0;
}

static const struct ublk_batch_io *cmd_of(const struct io_uring_sqe *sqe)
{
	return (const struct ublk_batch_io *)
		((const char *)sqe + offsetof(struct io_uring_sqe, addr3));
}

static void test_uapi_numbers(void **state)
{
	(void)state;
	/* _IOWR('u', 0x25..0x27, 16 bytes), as in the 7.0 header. */
	assert_int_equal(UBLK_U_IO_PREP_IO_CMDS, 0xC0107525u);
	assert_int_equal(UBLK_U_IO_COMMIT_IO_CMDS, 0xC0107526u);
	assert_int_equal(UBLK_U_IO_FETCH_IO_CMDS, 0xC0107527u);
	assert_int_equal(sizeof(struct ublk_batch_io), 16);
	assert_int_equal(offsetof(struct ini_batch_elem, result), 4);
	assert_int_equal(offsetof(struct ini_batch_elem, buf_addr), 8);
}

static void test_prep_names_every_tag(void **state)
{
	struct fixture *f = *state;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);
	const struct ini_batch_elem *e;

	ini_batch_prep(&f->b, sqe);
	assert_int_equal(sqe->opcode, IORING_OP_URING_CMD);
	assert_int_equal(sqe->fd, CDEV_FD);
	assert_int_equal(sqe->cmd_op, UBLK_U_IO_PREP_IO_CMDS);
	assert_int_equal(cmd_of(sqe)->q_id, 3);
	assert_int_equal(cmd_of(sqe)->flags, UBLK_BATCH_F_HAS_BUF_ADDR);
	assert_int_equal(cmd_of(sqe)->nr_elem, DEPTH);
	assert_int_equal(cmd_of(sqe)->elem_bytes, 16);
	assert_int_equal(sqe->len, DEPTH * 16);
	e = (const struct ini_batch_elem *)(uintptr_t)sqe->addr;
	for (unsigned t = 0; t < DEPTH; t++) {
		assert_int_equal(e[t].tag, t);
		assert_int_equal(e[t].result, 0);
		assert_true(e[t].buf_addr == (uintptr_t)(f->bufs + t * BUF_BYTES));
	}
	/* The PREP's buffer is slot 0's: busy until its completion. */
	assert_int_equal(ini_batch_prepped(&f->b, -EINVAL), -EINVAL);
}

static void test_fetch_is_multishot_with_buffers(void **state)
{
	struct fixture *f = *state;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);

	ini_batch_fetch(&f->b, sqe);
	assert_int_equal(sqe->cmd_op, UBLK_U_IO_FETCH_IO_CMDS);
	assert_int_equal(sqe->fd, CDEV_FD);
	assert_true(sqe->flags & IOSQE_BUFFER_SELECT);
	assert_int_equal(sqe->buf_group, 0);
	assert_int_equal(sqe->uring_cmd_flags, IORING_URING_CMD_MULTISHOT);
	assert_int_equal(cmd_of(sqe)->elem_bytes, 2);
	assert_int_equal(cmd_of(sqe)->flags, 0);
	assert_int_equal(cmd_of(sqe)->q_id, 3);
}

static void test_fetched_tags_come_from_the_named_buffer(void **state)
{
	struct fixture *f = *state;
	const uint16_t *tags, *tags2;
	unsigned n;
	int bid;

	/* No buffer in the completion: nothing to read. */
	assert_int_equal(ini_batch_fetched(&f->b, -ENOBUFS, 0, &tags, &n), -1);
	bid = ini_batch_fetched(&f->b, 6, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
				(5u << IORING_CQE_BUFFER_SHIFT), &tags, &n);
	assert_int_equal(bid, 5);
	assert_int_equal(n, 3);
	bid = ini_batch_fetched(&f->b, 2, IORING_CQE_F_BUFFER |
				(4u << IORING_CQE_BUFFER_SHIFT), &tags2, &n);
	assert_int_equal(bid, 4);
	assert_int_equal(n, 1);
	assert_int_equal(tags - tags2, INI_BATCH_FETCH_TAGS);
	/* An id the ring never had is refused, not read. */
	assert_int_equal(ini_batch_fetched(&f->b, 2, IORING_CQE_F_BUFFER |
					   (INI_BATCH_FETCH_BUFS << IORING_CQE_BUFFER_SHIFT),
					   &tags, &n), -1);
	/* Given back: the ring's tail moves on by one. */
	{
		uint16_t tail = f->b.fetch_ring->tail;

		ini_batch_fetch_done(&f->b, 5);
		assert_int_equal((uint16_t)(f->b.fetch_ring->tail - tail), 1);
	}
}

static void test_commit_collects_a_turn(void **state)
{
	struct fixture *f = *state;
	struct io_uring_sqe *sqe;
	const struct ini_batch_elem *e;
	int slot;

	assert_false(ini_batch_pending(&f->b));
	assert_int_equal(ini_batch_commit(&f->b, 2, 4096), 0);
	assert_int_equal(ini_batch_commit(&f->b, 7, -EIO), 0);
	assert_true(ini_batch_pending(&f->b));
	sqe = io_uring_get_sqe(&f->ring);
	slot = ini_batch_flush(&f->b, sqe);
	assert_false(ini_batch_pending(&f->b));
	assert_int_equal(sqe->cmd_op, UBLK_U_IO_COMMIT_IO_CMDS);
	assert_int_equal(cmd_of(sqe)->nr_elem, 2);
	assert_int_equal(cmd_of(sqe)->flags, UBLK_BATCH_F_HAS_BUF_ADDR);
	e = (const struct ini_batch_elem *)(uintptr_t)sqe->addr;
	assert_int_equal(e[0].tag, 2);
	assert_int_equal(e[0].result, 4096);
	assert_true(e[0].buf_addr == (uintptr_t)(f->bufs + 2 * BUF_BYTES));
	assert_int_equal(e[1].tag, 7);
	assert_int_equal(e[1].result, -EIO);
	/* The next turn's answers go to another slot while it is in flight. */
	assert_int_equal(ini_batch_commit(&f->b, 1, 512), 0);
	sqe = io_uring_get_sqe(&f->ring);
	assert_int_not_equal(ini_batch_flush(&f->b, sqe), slot);
	assert_int_equal(ini_batch_committed(&f->b, slot, 2 * 16), 0);
}

static void test_short_commit_counts_the_refused(void **state)
{
	struct fixture *f = *state;
	int slot;

	for (unsigned t = 0; t < 3; t++)
		assert_int_equal(ini_batch_commit(&f->b, t, 0), 0);
	slot = ini_batch_flush(&f->b, io_uring_get_sqe(&f->ring));
	assert_int_equal(ini_batch_committed(&f->b, slot, 16), 2);
	assert_int_equal(ini_batch_commit(&f->b, 0, 0), 0);
	slot = ini_batch_flush(&f->b, io_uring_get_sqe(&f->ring));
	assert_int_equal(ini_batch_committed(&f->b, slot, -EBUSY), 1);
}

static void test_every_slot_in_flight_refuses(void **state)
{
	struct fixture *f = *state;

	for (unsigned i = 0; i < INI_BATCH_COMMIT_SLOTS; i++) {
		assert_int_equal(ini_batch_commit(&f->b, i, 0), 0);
		ini_batch_flush(&f->b, io_uring_get_sqe(&f->ring));
	}
	assert_int_equal(ini_batch_commit(&f->b, 5, 0), -EBUSY);
	assert_false(ini_batch_pending(&f->b));
	ini_batch_committed(&f->b, 1, 16);
	assert_int_equal(ini_batch_commit(&f->b, 5, 0), 0);
}

/* Provided buffer rings came with Linux 5.19: without them, skip (77). */
static int have_buf_rings(void)
{
	struct fixture *f = NULL;
	int ret = setup((void **)&f);

	if (!ret)
		teardown((void **)&f);
	return !ret;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uapi_numbers),
		cmocka_unit_test_setup_teardown(test_prep_names_every_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_is_multishot_with_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetched_tags_come_from_the_named_buffer,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_collects_a_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_commit_counts_the_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_slot_in_flight_refuses, setup, teardown),
	};

	if (!have_buf_rings()) {
		printf("this kernel's io_uring has no provided buffer rings (Linux 5.19+)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
