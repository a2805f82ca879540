// SPDX-License-Identifier: MIT
/*
 * RDMA CM private data (rblk_encode/decode_rdma_cm) and the verbs error
 * conversion: what a hostile peer can put in a connect request must be
 * refused with the right status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rblk_proto.h"
#include "rdma_verbs.h"

static void roundtrip(void **state)
{
	struct rblk_rdma_cm in = { .queue_id = 3, .queue_depth = 128 }, out;
	uint8_t buf[56];

	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(rblk_encode_rdma_cm(buf, &in), 20);
	/* The CM pads the private data; the tail must not matter. */
	assert_int_equal(rblk_decode_rdma_cm(buf, sizeof(buf), &out), RBLK_S_OK);
	assert_int_equal(out.queue_id, 3);
	assert_int_equal(out.queue_depth, 128);
	assert_int_equal(out.status, 0);
	/* Little-endian on the wire whatever the host. */
	assert_int_equal(buf[0], 'r');
	assert_int_equal(buf[3], 'k');
	assert_int_equal(buf[4], RBLK_PROTO_VERSION);
	assert_int_equal(buf[6], 3);
	assert_int_equal(buf[8], 128);
	assert_int_equal(buf[9], 0);
}

static void reject_roundtrip(void **state)
{
	struct rblk_rdma_cm in = { .status = RBLK_S_NO_RESOURCES }, out;
	uint8_t buf[20];

	rblk_encode_rdma_cm(buf, &in);
	assert_int_equal(rblk_decode_rdma_cm(buf, sizeof(buf), &out), RBLK_S_OK);
	assert_int_equal(out.status, RBLK_S_NO_RESOURCES);
}

static void hostile(void **state)
{
	struct rblk_rdma_cm in = { .queue_id = 1, .queue_depth = 32 }, out;
	uint8_t good[20], buf[20];

	rblk_encode_rdma_cm(good, &in);
	assert_int_equal(rblk_decode_rdma_cm(NULL, 0, &out), RBLK_S_INVALID_FIELD);
	assert_int_equal(rblk_decode_rdma_cm(good, 19, &out), RBLK_S_INVALID_FIELD);

	memcpy(buf, good, 20);
	buf[0] ^= 1;				/* magic */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);

	memcpy(buf, good, 20);
	buf[4] = RBLK_PROTO_VERSION + 1;	/* version */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_BAD_VERSION);

	memcpy(buf, good, 20);
	buf[5] = 1;				/* rsvd0 */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);

	memcpy(buf, good, 20);
	buf[19] = 1;				/* rsvd[1] */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);

	memcpy(buf, good, 20);
	buf[8] = buf[9] = 0;			/* depth 0 */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);

	in.queue_depth = RBLK_MAX_QUEUE_DEPTH + 1;
	rblk_encode_rdma_cm(buf, &in);
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);
	in.queue_depth = RBLK_MAX_QUEUE_DEPTH;
	rblk_encode_rdma_cm(buf, &in);
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_OK);

	memcpy(buf, good, 20);
	buf[10] = RBLK_S__MAX;			/* unknown status */
	assert_int_equal(rblk_decode_rdma_cm(buf, 20, &out), RBLK_S_INVALID_FIELD);
}

static void err_conversion(void **state)
{
	assert_int_equal(rblk_ibv_err(0), 0);
	assert_int_equal(rblk_ibv_err(ENOMEM), -ENOMEM);
	errno = EINVAL;
	assert_int_equal(rblk_ibv_err(-1), -EINVAL);
	errno = ENODEV;
	assert_int_equal(rblk_cm_err(-1), -ENODEV);
	assert_int_equal(rblk_cm_err(0), 0);
	errno = 0;
	assert_int_equal(rblk_cm_err(-1), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip),
		cmocka_unit_test(reject_roundtrip),
		cmocka_unit_test(hostile),
		cmocka_unit_test(err_conversion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
