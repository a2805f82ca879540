// SPDX-License-Identifier: MIT
/*
 * rblk-initiator's --poll and --poll-us: the three modes parse, the default
 * is event with 50 us, and a bad value is refused with a line that names
 * the option, leaving the options as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../initiator/opts.h"
#include "helpers.h"

static void defaults(struct ini_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->transport = "tcp";
	o->dev_id = o->cleanup_dev = o->recover_dev = o->ready_fd = -1;
	o->poll_us = RBLK_POLL_US_DEFAULT;
}

/* Runs the parser on "--target t --volume v" plus extra (NULL-ended). */
static int parse(struct ini_opts *o, const char *a1, const char *a2)
{
	char *argv[] = { "rblk-initiator", "--target", "t", "--volume", "v",
			 (char *)a1, (char *)a2, NULL };
	int argc = a1 ? (a2 ? 7 : 6) : 5;

	optind = 0;	/* glibc: reinitialise getopt */
	return ini_opts_parse(argc, argv, o);
}

/* --target: host and port as the client library wants them. */
static void target_forms(void **state)
{
	struct ini_opts o;
	char *argv[] = { "rblk-initiator", "--target", NULL, "--volume", "v", NULL };
	static const struct { const char *arg, *host, *port; } ok[] = {
		{ "10.0.0.5", "10.0.0.5", NULL },
		{ "10.0.0.5:4421", "10.0.0.5", "4421" },
		{ "[fe80::1]:99", "fe80::1", "99" },
		{ "fe80::1", "fe80::1", NULL },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(ok); i++) {
		defaults(&o);
		argv[2] = (char *)ok[i].arg;
		optind = 0;
		assert_int_equal(ini_opts_parse(5, argv, &o), 0);
		assert_string_equal(o.host, ok[i].host);
		if (ok[i].port)
			assert_string_equal(o.port, ok[i].port);
		else
			assert_null(o.port);
	}
	defaults(&o);
	argv[2] = "h:0";
	optind = 0;
	assert_int_not_equal(ini_opts_parse(5, argv, &o), 0);
}

static void poll_modes(void **state)
{
	static const struct { const char *name; enum rblk_poll_mode m; } ok[] = {
		{ "event", RBLK_POLL_EVENT },
		{ "busy", RBLK_POLL_BUSY },
		{ "adaptive", RBLK_POLL_ADAPTIVE },
	};
	struct ini_opts o;

	defaults(&o);
	assert_int_equal(parse(&o, NULL, NULL), 0);
	assert_int_equal(o.poll, RBLK_POLL_EVENT);
	assert_int_equal(o.poll_us, 50);
	for (unsigned i = 0; i < ARRAY_SIZE(ok); i++) {
		defaults(&o);
		assert_int_equal(parse(&o, "--poll", ok[i].name), 0);
		assert_int_equal(o.poll, ok[i].m);
		assert_string_equal(rblk_poll_mode_str(o.poll), ok[i].name);
	}
	defaults(&o);
	assert_int_equal(parse(&o, "--poll-us", "0"), 0);
	assert_int_equal(o.poll_us, 0);
	assert_int_equal(parse(&o, "--poll-us", "1000000"), 0);
	assert_int_equal(o.poll_us, 1000000);
}

static void poll_bad(void **state)
{
	static const char *const bad_mode[] = { "spin", "", "Busy", "adaptive1" };
	static const char *const bad_us[] = { "-1", "1000001", "10us", "", "x" };
	struct ini_opts o;

	for (unsigned i = 0; i < ARRAY_SIZE(bad_mode); i++) {
		defaults(&o);
		o.poll = RBLK_POLL_BUSY;
		assert_int_equal(parse(&o, "--poll", bad_mode[i]), -EINVAL);
		assert_int_equal(o.poll, RBLK_POLL_BUSY);
	}
	for (unsigned i = 0; i < ARRAY_SIZE(bad_us); i++) {
		defaults(&o);
		assert_int_equal(parse(&o, "--poll-us", bad_us[i]), -EINVAL);
		assert_int_equal(o.poll_us, RBLK_POLL_US_DEFAULT);
	}
}

/* The message names the option and the choices. */
static void poll_message(void **state)
{
	struct ini_opts o;
	char buf[512] = "";
	FILE *f = tmpfile();
	int saved = dup(2);

	assert_non_null(f);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(f), 2) >= 0);
	defaults(&o);
	assert_int_equal(parse(&o, "--poll", "spin"), -EINVAL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	assert_non_null(strstr(buf, "--poll is event, busy or adaptive"));
	assert_non_null(strstr(buf, "'spin'"));
}

/*
 * The table rblk-initiator and rblkctl attach share: every entry takes a
 * good value and refuses a bad one through ini_opt_apply, as getopt
 * would hand them over, leaving the options as they were; a code not in
 * the table is not taken.
 */
static void shared_table(void **state)
{
	static const struct { int code; const char *good, *bad; } v[] = {
		{ 't', "10.0.0.5:4420", "h:0" }, { 'T', "rdma", "udp" },
		{ 'q', "4", "0" }, { 'd', "128", "100000" },
		{ 'K', "-1", "1.5" }, { 'O', "30", "x" }, { 'R', "1", "0" },
		{ 'X', "600", "-2" }, { 'F', "0", "" },
		{ 'P', "busy", "spin" }, { 'U', "10", "-1" }, { 'B', "30", "0" },
		{ 'A', "spread", "Spread" }, { 'b', "off", "no" },
		{ 'a', "on", "auto" },
	};
	struct ini_opts o, before;
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);

	assert_int_equal(INI_SHARED_OPTS, 18);
	for (unsigned i = 0; i < INI_SHARED_OPTS; i++)
		assert_int_equal(ini_opt_index(ini_shared_opts[i].code), (int)i);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, 2);	/* the refusals' lines */
	for (unsigned i = 0; i < ARRAY_SIZE(v); i++) {
		defaults(&o);
		assert_int_equal(ini_opt_apply(v[i].code, v[i].good, &o, "test"), 0);
		defaults(&o);
		before = o;
		assert_int_equal(ini_opt_apply(v[i].code, v[i].bad, &o, "test"), -EINVAL);
		assert_memory_equal(&o, &before, sizeof(o));
	}
	/* --batch-io: off asks for per-tag commands, auto again not */
	defaults(&o);
	assert_int_equal(ini_opt_apply('b', "off", &o, "test"), 0);
	assert_int_equal(o.batch_io_off, 1);
	assert_int_equal(ini_opt_apply('b', "auto", &o, "test"), 0);
	assert_int_equal(o.batch_io_off, 0);
	/* --pin-queues: on keeps the threads on their queues' CPUs, off
	 * (the default) leaves them to the scheduler */
	defaults(&o);
	assert_int_equal(ini_opt_apply('a', "on", &o, "test"), 0);
	assert_int_equal(o.pin_queues, 1);
	assert_int_equal(ini_opt_apply('a', "off", &o, "test"), 0);
	assert_int_equal(o.pin_queues, 0);
	/* --read-policy: spread on, standby off again */
	defaults(&o);
	assert_int_equal(ini_opt_apply('A', "spread", &o, "test"), 0);
	assert_int_equal(o.read_spread, 1);
	assert_int_equal(ini_opt_apply('A', "standby", &o, "test"), 0);
	assert_int_equal(o.read_spread, 0);
	defaults(&o);
	/* --target again: one more path each, the first sets host/port */
	assert_int_equal(ini_opt_apply('t', "10.0.0.5:4421", &o, "test"), 0);
	assert_int_equal(ini_opt_apply('t', "tcp:[fe80::1]", &o, "test"), 0);
	assert_int_equal(o.ntargets, 2);
	assert_string_equal(o.host, "10.0.0.5");
	assert_string_equal(o.port, "4421");
	assert_string_equal(o.targets[1].transport, "tcp");
	assert_string_equal(o.targets[1].host, "fe80::1");
	for (unsigned i = 2; i < RBLK_MAX_PATHS; i++)
		assert_int_equal(ini_opt_apply('t', "h", &o, "test"), 0);
	assert_int_equal(ini_opt_apply('t', "h", &o, "test"), -EINVAL);	/* a 9th */
	dup2(saved, 2);
	close(saved);
	close(devnull);
	defaults(&o);
	assert_int_equal(ini_opt_apply('w', "5", &o, "test"), 1);	/* attach's --timeout */
	assert_int_equal(ini_opt_apply('X', "-1", &o, "test"), 0);
	assert_int_equal(o.tmo_s[INI_TMO_CTRL_LOSS], -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(target_forms),
		cmocka_unit_test(poll_modes),
		cmocka_unit_test(poll_bad),
		cmocka_unit_test(poll_message),
		cmocka_unit_test(shared_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
