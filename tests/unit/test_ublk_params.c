// SPDX-License-Identifier: MIT
/* ublk device parameters built from what LOGIN_RSP granted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../initiator/ublk_params.h"
#include "helpers.h"

static struct rblk_volume_info vol(uint64_t size, uint32_t bs, uint32_t max_io,
				   uint32_t flags)
{
	struct rblk_volume_info vi = {
		.size = size, .block_size = bs, .max_io = max_io,
		.vol_flags = flags, .queue_depth = 128, .max_sge = 1,
		.max_discard = flags & RBLK_VOL_F_DISCARD ?
			RBLK_DEFAULT_MAX_DISCARD : 0,
		.max_write_zeroes = flags & RBLK_VOL_F_WRITE_ZEROES ?
			RBLK_DEFAULT_MAX_WRITE_ZEROES : 0,
	};
	return vi;
}

static void test_file_volume_all_caps(void **state)
{
	struct rblk_volume_info vi = vol(256ull << 20, 512, 1 << 20,
		RBLK_VOL_F_FLUSH | RBLK_VOL_F_FUA | RBLK_VOL_F_DISCARD |
		RBLK_VOL_F_WRITE_ZEROES);
	struct ublk_params p;

	assert_int_equal(ini_ublk_io_buf_bytes(&vi), 1 << 20);
	assert_int_equal(ini_ublk_build_params(&vi, 1 << 20, &p), 0);
	assert_int_equal(p.len, sizeof(p));
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD);
	assert_int_equal(p.basic.logical_bs_shift, 9);
	assert_int_equal(p.basic.physical_bs_shift, 12);
	assert_int_equal(p.basic.max_sectors, 2048);
	assert_int_equal(p.basic.dev_sectors, (256ull << 20) / 512);
	assert_int_equal(p.basic.attrs, UBLK_ATTR_VOLATILE_CACHE | UBLK_ATTR_FUA);
	assert_int_equal(p.basic.chunk_sectors, 0);
	assert_int_equal(p.discard.discard_granularity, 512);
	assert_int_equal(p.discard.max_discard_segments, 1);
	/* the target's limits, not max_io: no data moves */
	assert_int_equal(p.discard.max_discard_sectors, (1u << 30) >> 9);
	assert_int_equal(p.discard.max_write_zeroes_sectors, (128u << 20) >> 9);
}

/* The block layer splits by these, so they must be exactly the target's
 * [V34] limits, whatever max_io and the tag buffers are. */
static void test_discard_limits_from_target(void **state)
{
	struct rblk_volume_info vi = vol(8ull << 30, 4096, 128 << 10,
		RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES);
	struct ublk_params p;

	vi.max_discard = 64 << 10;
	vi.max_write_zeroes = 3u << 30;
	assert_int_equal(ini_ublk_build_params(&vi, 128 << 10, &p), 0);
	assert_int_equal(p.basic.max_sectors, 256);
	assert_int_equal(p.discard.max_discard_sectors, 128);
	assert_int_equal(p.discard.max_write_zeroes_sectors, (3u << 30) >> 9);
}

static void test_no_caps_is_basic_only(void **state)
{
	struct rblk_volume_info vi = vol(64ull << 20, 4096, 128 << 10, 0);
	struct ublk_params p;

	memset(&p, 0xff, sizeof(p));
	assert_int_equal(ini_ublk_build_params(&vi, 128 << 10, &p), 0);
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC);
	assert_int_equal(p.basic.logical_bs_shift, 12);
	assert_int_equal(p.basic.physical_bs_shift, 12);
	assert_int_equal(p.basic.attrs, 0);
	assert_int_equal(p.basic.max_sectors, 256);
	/* stale bytes must not leak into the discard part */
	assert_int_equal(p.discard.max_discard_sectors, 0);
	assert_int_equal(p.discard.max_write_zeroes_sectors, 0);
}

static void test_fua_needs_flush(void **state)
{
	struct rblk_volume_info vi = vol(1 << 20, 512, 4096, RBLK_VOL_F_FUA);
	struct ublk_params p;

	assert_int_equal(ini_ublk_build_params(&vi, 4096, &p), 0);
	assert_int_equal(p.basic.attrs, 0);
}

static void test_write_zeroes_only(void **state)
{
	struct rblk_volume_info vi = vol(1 << 30, 512, 1 << 20,
					 RBLK_VOL_F_WRITE_ZEROES);
	struct ublk_params p;

	assert_int_equal(ini_ublk_build_params(&vi, 1 << 20, &p), 0);
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD);
	assert_int_equal(p.discard.max_discard_sectors, 0);
	assert_int_equal(p.discard.max_write_zeroes_sectors, (128u << 20) >> 9);
	/* the kernel rejects a zero granularity whenever DISCARD is sent */
	assert_int_not_equal(p.discard.discard_granularity, 0);
	assert_int_equal(p.discard.max_discard_segments, 1);
}

static void test_read_only(void **state)
{
	struct rblk_volume_info vi = vol(1 << 30, 512, 1 << 20,
		RBLK_VOL_F_READ_ONLY | RBLK_VOL_F_DISCARD);
	struct ublk_params p;

	assert_int_equal(ini_ublk_build_params(&vi, 1 << 20, &p), 0);
	assert_true(p.basic.attrs & UBLK_ATTR_READ_ONLY);
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC);
}

static void test_buffer_caps_max_sectors(void **state)
{
	/* target allows 1 MiB but the kernel granted smaller tag buffers */
	struct rblk_volume_info vi = vol(1 << 30, 512, 1 << 20, RBLK_VOL_F_DISCARD);
	struct ublk_params p;

	assert_int_equal(ini_ublk_build_params(&vi, 256 << 10, &p), 0);
	assert_int_equal(p.basic.max_sectors, 512);
	/* discard moves no data: the tag buffer does not bound it */
	assert_int_equal(p.discard.max_discard_sectors, (1u << 30) >> 9);
	/* a non-block-multiple buffer is rounded down to whole blocks */
	vi.block_size = 4096;
	assert_int_equal(ini_ublk_build_params(&vi, (256 << 10) + 512, &p), 0);
	assert_int_equal(p.basic.max_sectors, 512);
	/* a buffer below one block is unusable */
	assert_int_equal(ini_ublk_build_params(&vi, 2048, &p), -EINVAL);
}

static void test_io_buf_bytes(void **state)
{
	struct rblk_volume_info vi = vol(1 << 30, 512, 4u << 20, 0);

	assert_int_equal(ini_ublk_io_buf_bytes(&vi), INI_UBLK_MAX_IO_BUF);
	vi.max_io = 65536 + 512;
	assert_int_equal(ini_ublk_io_buf_bytes(&vi), 65536);
}

static void test_bad_volumes(void **state)
{
	struct ublk_params p;
	char why[128];
	struct rblk_volume_info bad[] = {
		vol(1 << 20, 0, 1 << 20, 0),
		vol(1 << 20, 768, 1 << 20, 0),
		vol(1 << 20, 8192, 1 << 20, 0),
		vol(1 << 20, 256, 1 << 20, 0),
		vol(0, 512, 1 << 20, 0),
		vol((1 << 20) + 512, 4096, 1 << 20, 0),
		vol(1 << 20, 512, 2048, 0),
		vol(1 << 20, 4096, 4096 + 512, 0),
	};
	struct rblk_volume_info nodepth = vol(1 << 20, 512, 1 << 20, 0);

	nodepth.queue_depth = 0;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why[0] = 0;
		assert_int_equal(ini_ublk_check_volume(&bad[i], why, sizeof(why)),
				 -EINVAL);
		assert_true(strlen(why) > 0);
		assert_int_equal(ini_ublk_build_params(&bad[i], 1 << 20, &p),
				 -EINVAL);
	}
	assert_int_equal(ini_ublk_check_volume(&nodepth, NULL, 0), -EINVAL);
	for (uint32_t bs = 512; bs <= 4096; bs *= 2) {
		struct rblk_volume_info ok = vol(1 << 20, bs, 1 << 20, 0);

		assert_int_equal(ini_ublk_check_volume(&ok, why, sizeof(why)), 0);
		assert_int_equal(ini_ublk_build_params(&ok, 1 << 20, &p), 0);
		assert_int_equal(1u << p.basic.logical_bs_shift, bs);
		assert_true(p.basic.physical_bs_shift >= p.basic.logical_bs_shift);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discard_limits_from_target),
		cmocka_unit_test(test_file_volume_all_caps),
		cmocka_unit_test(test_no_caps_is_basic_only),
		cmocka_unit_test(test_fua_needs_flush),
		cmocka_unit_test(test_write_zeroes_only),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_buffer_caps_max_sectors),
		cmocka_unit_test(test_io_buf_bytes),
		cmocka_unit_test(test_bad_volumes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
