// SPDX-License-Identifier: MIT
/* /run/rblk state files: write, read back, list, remove (in a temp dir). */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

	for (int i = 0; i < INI_TMO_COUNT; i++)
		s.tmo_s[i] = INI_TMO_UNSET;
	s.poll_us = -1;

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

/* What recovery needs comes back as written; unset timeouts stay unset. */
static void test_recovery_fields(void **st)
{
	struct ini_state in = sample(4), out;

	snprintf(in.recovery, sizeof(in.recovery), "auto");
	in.supervisor = 4242;
	in.recoveries = 20;
	snprintf(in.hostname, sizeof(in.hostname), "client-1");
	snprintf(in.secret_file, sizeof(in.secret_file), "/etc/rblk/vol 1.key");
	in.grace_ms = 2500;
	in.tmo_s[INI_TMO_RECONNECT_DELAY] = 1;
	in.tmo_s[INI_TMO_CTRL_LOSS] = -1;
	in.tmo_s[INI_TMO_FAST_IO_FAIL] = 0;
	snprintf(in.poll, sizeof(in.poll), "adaptive");
	in.poll_us = 75;
	assert_int_equal(ini_state_write(&in), 0);
	assert_int_equal(ini_state_get(4, &out), 0);
	assert_string_equal(out.recovery, "auto");
	assert_int_equal(out.supervisor, 4242);
	assert_int_equal(out.recoveries, 20);
	assert_string_equal(out.hostname, "client-1");
	assert_string_equal(out.secret_file, "/etc/rblk/vol 1.key");
	assert_int_equal(out.grace_ms, 2500);
	assert_int_equal(out.tmo_s[INI_TMO_KEEP_ALIVE], INI_TMO_UNSET);
	assert_int_equal(out.tmo_s[INI_TMO_IO], INI_TMO_UNSET);
	assert_int_equal(out.tmo_s[INI_TMO_RECONNECT_DELAY], 1);
	assert_int_equal(out.tmo_s[INI_TMO_CTRL_LOSS], -1);
	assert_int_equal(out.tmo_s[INI_TMO_FAST_IO_FAIL], 0);
	assert_string_equal(out.poll, "adaptive");
	assert_int_equal(out.poll_us, 75);
	/* not our supervisor: this test program has another name */
	out.supervisor = getpid();
	assert_int_equal(ini_state_supervised(&out), 0);
	assert_int_equal(ini_state_remove(4), 0);

	/* a file written before recovery existed: nothing to recover with */
	write_file("ublkb8.json", "{\"device\": 8, \"pid\": 1, \"target\": \"t\", "
		   "\"keep_alive_tmo\": -7}");
	assert_int_equal(ini_state_get(8, &out), 0);
	assert_string_equal(out.recovery, "");
	assert_int_equal(out.supervisor, 0);
	for (int i = 0; i < INI_TMO_COUNT; i++)
		assert_int_equal(out.tmo_s[i], INI_TMO_UNSET);
	assert_string_equal(out.poll, "");
	assert_int_equal(out.poll_us, -1);
	assert_int_equal(ini_state_remove(8), 0);
}

/* A killed server that nobody reaped yet serves nothing. */
static void test_zombie_is_not_alive(void **st)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(ini_pid_alive(getpid()), 1);
	for (int i = 0; i < 200 && ini_pid_alive(pid); i++)
		usleep(10000);
	assert_int_equal(ini_pid_alive(pid), 0);	/* exited, not reaped */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(ini_pid_alive(pid), 0);
	assert_int_equal(ini_pid_alive(0), 0);
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

/*
 * A live process called rblk-initiator is alive; this test program (a
 * recycled pid in the state file) and pid 0 are not.  The live one is
 * /bin/sleep run under the name rblk-initiator (its comm is the name of
 * what was executed: a symlink's name).
 */
static void test_alive(void **st)
{
	char dir[] = "/tmp/rblk-alive-XXXXXX", link[64];
	struct ini_state s = sample(1);
	pid_t child;
	int status;

	assert_int_equal(ini_state_alive(&s), 0);
	s.pid = 0;
	assert_int_equal(ini_state_alive(&s), 0);

	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/rblk-initiator", dir);
	assert_int_equal(symlink("/bin/sleep", link), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		execl(link, "rblk-initiator", "30", (char *)NULL);
		_exit(127);
	}
	s.pid = child;
	/* Until exec has happened the child's comm is still ours. */
	for (int i = 0; i < 200 && !ini_state_alive(&s); i++)
		usleep(10000);
	assert_int_equal(ini_state_alive(&s), 1);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	assert_int_equal(ini_state_alive(&s), 0);	/* reaped: gone */
	unlink(link);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_recovery_fields),
		cmocka_unit_test(test_zombie_is_not_alive),
		cmocka_unit_test(test_list_sorted_skips_junk),
		cmocka_unit_test(test_missing_dir_is_empty),
		cmocka_unit_test(test_alive),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
