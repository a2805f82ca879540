// SPDX-License-Identifier: MIT
/* /run/rblk state files: write, read back, list, remove (in a temp dir). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../initiator/state.h"

static char dir[64];

static int setup(void **st)
{
	snprintf(dir, sizeof(dir), "/tmp/rblk-state-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("RBLK_RUN_DIR", dir, 1);
	return 0;
}

static int teardown(void **st)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct ini_state sample(int id)
{
	struct ini_state s = {
		.dev_id = id, .pid = getpid(), .queues = 2, .depth = 64,
		.size = 1ull << 40, .block_size = 4096, .started = 1764000000,
		.state_since = 1764000123, .reconnects = 7,
	};

	snprintf(s.target, sizeof(s.target), "fe80::1");
	snprintf(s.port, sizeof(s.port), "4421");
	snprintf(s.volume, sizeof(s.volume), "vol-%d", id);
	snprintf(s.transport, sizeof(s.transport), "rdma");
	snprintf(s.state, sizeof(s.state), "live");
	snprintf(s.log, sizeof(s.log), "/run/rblk/x \"quoted\".log");
	return s;
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_roundtrip(void **st)
{
	struct ini_state in = sample(3), out;

	assert_string_equal(ini_state_dir(), dir);
	assert_int_equal(ini_state_write(&in), 0);
	assert_int_equal(ini_state_get(3, &out), 0);
	assert_int_equal(out.dev_id, 3);
	assert_int_equal(out.pid, in.pid);
	assert_string_equal(out.target, "fe80::1");
	assert_string_equal(out.port, "4421");
	assert_string_equal(out.volume, "vol-3");
	assert_string_equal(out.transport, "rdma");
	assert_string_equal(out.state, "live");
	assert_string_equal(out.log, in.log);
	assert_int_equal(out.queues, 2);
	assert_int_equal(out.depth, 64);
	assert_true(out.size == 1ull << 40);
	assert_int_equal(out.block_size, 4096);
	assert_int_equal(out.started, 1764000000);
	assert_int_equal(out.state_since, 1764000123);
	assert_int_equal(out.reconnects, 7);
	/* rewrite replaces */
	snprintf(in.state, sizeof(in.state), "stopping");
	assert_int_equal(ini_state_write(&in), 0);
	assert_int_equal(ini_state_get(3, &out), 0);
	assert_string_equal(out.state, "stopping");
	assert_int_equal(ini_state_remove(3), 0);
	assert_int_equal(ini_state_get(3, &out), -ENOENT);
	assert_int_equal(ini_state_remove(3), -ENOENT);
}

static void test_list_sorted_skips_junk(void **st)
{
	struct ini_state a = sample(10), b = sample(2), *list;
	int n;

	assert_int_equal(ini_state_write(&a), 0);
	assert_int_equal(ini_state_write(&b), 0);
	write_file("ublkb5.json.tmp123", "{\"device\": 5}");	/* temp file */
	write_file("ublkb6.json", "not json at all");
	write_file("ublkb7.json", "[1, 2]");
	write_file("target.sock", "");
	n = ini_state_list(&list);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].dev_id, 2);
	assert_int_equal(list[1].dev_id, 10);
	free(list);
	ini_state_remove(10);
	ini_state_remove(2);
}

static void test_missing_dir_is_empty(void **st)
{
	struct ini_state *list = (void *)1;

	setenv("RBLK_RUN_DIR", "/nonexistent/rblk-state-test", 1);
	assert_int_equal(ini_state_list(&list), 0);
	assert_null(list);
	setenv("RBLK_RUN_DIR", dir, 1);
}

static void test_alive(void **st)
{
	struct ini_state s = sample(1);

	/* this test program is not an rblk-initiator: a recycled pid must
	 * not count as the server */
	assert_int_equal(ini_state_alive(&s), 0);
	s.pid = 0;
	assert_int_equal(ini_state_alive(&s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_list_sorted_skips_junk),
		cmocka_unit_test(test_missing_dir_is_empty),
		cmocka_unit_test(test_alive),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
