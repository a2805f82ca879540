// SPDX-License-Identifier: MIT
/*
 * The disk's scheduler file (initiator/disk_sched.c), on a regular file
 * that holds what sysfs shows; the kernel's side is tested in the VM
 * (suite-ublk, attach_list_detach and recovery_auto).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../initiator/disk_sched.h"

/* A temporary file holding text; its path into path. */
static void sched_file(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/rblk-test-sched.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
}

static void read_back(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
}

static void test_deadline_becomes_none(void **state)
{
	char path[64], was[32], now[64];

	sched_file(path, "none [mq-deadline] kyber\n");
	assert_int_equal(ini_disk_sched_none(path, was, sizeof(was)), 1);
	assert_string_equal(was, "mq-deadline");
	read_back(path, now, sizeof(now));
	assert_memory_equal(now, "none", 4);
	unlink(path);
}

static void test_none_is_left_alone(void **state)
{
	char path[64], was[32], now[64];

	sched_file(path, "[none] mq-deadline\n");
	assert_int_equal(ini_disk_sched_none(path, was, sizeof(was)), 0);
	assert_string_equal(was, "none");
	read_back(path, now, sizeof(now));
	assert_string_equal(now, "[none] mq-deadline\n");
	unlink(path);
}

/* What cannot be understood is not written. */
static void test_unreadable_changes_nothing(void **state)
{
	static const char *const bad[] = {
		"none mq-deadline\n", "none [mq-deadline\n", "",
		"[a-name-longer-than-the-callers-buffer-holds-for-sure] none\n",
	};
	char path[64], was[32], now[96];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sched_file(path, bad[i]);
		assert_int_equal(ini_disk_sched_none(path, was, sizeof(was)), -EINVAL);
		now[0] = '\0';
		if (*bad[i])
			read_back(path, now, sizeof(now));
		assert_string_equal(now, bad[i]);
		unlink(path);
	}
	assert_int_equal(ini_disk_sched_none("/nonexistent/scheduler", was, sizeof(was)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_becomes_none),
		cmocka_unit_test(test_none_is_left_alone),
		cmocka_unit_test(test_unreadable_changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
