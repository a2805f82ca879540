// SPDX-License-Identifier: MIT
/* Size strings shared by the config and rblkctl (proto/size.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "size.h"

static void test_good_sizes(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "512M", 512ull << 20 },
		{ "10G", 10ull << 30 }, { "1T", 1ull << 40 }, { "1t", 1ull << 40 },
		{ "4k", 4096 }, { "64KiB", 64 << 10 }, { "2GiB", 2ull << 30 },
		{ "1TiB", 1ull << 40 }, { "3MiB", 3ull << 20 },
		{ "3P", 3ull << 50 }, { "16383P", 16383ull << 50 },
		{ "18446744073709551615", UINT64_MAX },
	};
	uint64_t v;

	for (unsigned i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 1;
		assert_int_equal(rblk_parse_size(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_bad_sizes(void **state)
{
	static const char *const bad[] = {
		"", " 10G", "10G ", "-1", "+5", "0x10", "10X", "10GG", "1.5G",
		"G", "10Gi", "10GiBs", "10 G", "1e9", "10g\n", "ten",
	};
	uint64_t v = 7;

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(rblk_parse_size(bad[i], &v), -EINVAL);
		assert_true(v == 7);	/* untouched on error */
	}
	assert_int_equal(rblk_parse_size(NULL, &v), -EINVAL);
	assert_int_equal(rblk_parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(rblk_parse_size("16384P", &v), -ERANGE);
	assert_int_equal(rblk_parse_size("99999999999999999999999", &v), -ERANGE);
	assert_true(v == 7);
}

/* KB, MB, ...: decimal to some, binary to others; refused, not guessed. */
static void test_ambiguous_units_refused(void **state)
{
	static const char *const amb[] = { "1KB", "512MB", "10GB", "2TB", "1PB", "10gb", "4kB" };
	uint64_t v = 7;

	for (unsigned i = 0; i < ARRAY_SIZE(amb); i++) {
		assert_int_equal(rblk_parse_size(amb[i], &v), -EDOM);
		assert_true(v == 7);
	}
	assert_non_null(strstr(rblk_size_error(-EDOM), "not taken"));
	assert_non_null(strstr(rblk_size_error(-EINVAL), "like 10G"));
}

static void test_format_round_trip(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 512, 4096, 4097, 1536ull << 20, 10ull << 30, 1ull << 40,
		5ull << 50, 1ull << 62, UINT64_MAX,
	};
	char buf[32];
	uint64_t v;

	assert_string_equal(rblk_format_size(10ull << 30, buf, sizeof(buf)), "10G");
	assert_string_equal(rblk_format_size(1536ull << 20, buf, sizeof(buf)), "1536M");
	assert_string_equal(rblk_format_size(4097, buf, sizeof(buf)), "4097");
	for (unsigned i = 0; i < ARRAY_SIZE(vals); i++) {
		rblk_format_size(vals[i], buf, sizeof(buf));
		assert_int_equal(rblk_parse_size(buf, &v), 0);
		assert_true(v == vals[i]);
	}
	assert_string_equal(rblk_human_size(1536ull << 20, buf, sizeof(buf)), "1.5G");
	assert_string_equal(rblk_human_size(100, buf, sizeof(buf)), "100B");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_sizes),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_ambiguous_units_refused),
		cmocka_unit_test(test_format_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
