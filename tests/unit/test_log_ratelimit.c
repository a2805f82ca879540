// SPDX-License-Identifier: MIT
/* Rate-limited log lines (proto/log.c): the decision on a fake clock, and
 * the real writer through a pipe standing in for stderr. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

static void test_one_per_second(void **state)
{
	struct rblk_ratelimit rl = RBLK_RATELIMIT_INIT(1000, 1);
	unsigned dropped = 99, passed = 0;

	assert_true(rblk_ratelimit_pass(&rl, 5000, &dropped));
	assert_int_equal(dropped, 0);
	/* A flood inside the second: all dropped, all counted. */
	for (int64_t t = 5000; t < 6000; t++)
		passed += rblk_ratelimit_pass(&rl, t, &dropped);
	assert_int_equal(passed, 0);
	/* The next window lets one out and reports the count. */
	assert_true(rblk_ratelimit_pass(&rl, 6000, &dropped));
	assert_int_equal(dropped, 1000);
	assert_false(rblk_ratelimit_pass(&rl, 6001, &dropped));
	/* After a quiet stretch the count starts over. */
	assert_true(rblk_ratelimit_pass(&rl, 60000, &dropped));
	assert_int_equal(dropped, 1);
	assert_true(rblk_ratelimit_pass(&rl, 70000, &dropped));
	assert_int_equal(dropped, 0);
}

static void test_burst(void **state)
{
	struct rblk_ratelimit rl = RBLK_RATELIMIT_INIT(1000, 3);
	unsigned dropped, passed = 0;

	for (int i = 0; i < 10; i++)
		passed += rblk_ratelimit_pass(&rl, 100 + i, &dropped);
	assert_int_equal(passed, 3);
	assert_true(rblk_ratelimit_pass(&rl, 1100, &dropped));
	assert_int_equal(dropped, 7);
}

/* The writer: a flood of 10000 calls makes one line, the line after the
 * window carries the suppressed count. */
static void test_writer(void **state)
{
	struct rblk_ratelimit rl = RBLK_RATELIMIT_INIT(200, 1);
	int p[2], saved_err;
	char buf[4096];
	ssize_t n;
	unsigned lines = 0;

	assert_int_equal(pipe(p), 0);
	saved_err = dup(STDERR_FILENO);
	assert_true(saved_err >= 0);
	assert_int_equal(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	for (int i = 0; i < 10000; i++)
		rblk_warn_rl(&rl, "accept: %s", strerror(EMFILE));
	usleep(250 * 1000);
	assert_true(rblk_warn_rl(&rl, "accept: %s", strerror(EMFILE)));
	/* Below the level: neither written nor counted. */
	rblk_log_level = RBLK_LOG_WARN;
	assert_false(rblk_log_rl(&rl, RBLK_LOG_INFO, "info noise"));
	rblk_log_level = RBLK_LOG_INFO;
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	buf[n] = 0;
	for (char *c = buf; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 2);
	assert_non_null(strstr(buf, "accept: Too many open files\n"));
	assert_non_null(strstr(buf, "accept: Too many open files (9999 more like this suppressed)\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_second),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
