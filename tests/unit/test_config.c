// SPDX-License-Identifier: MIT
/* Target config parser and writer (target/config.c): good configs, every
 * refusal (with FILE:LINE and the field in the message), round trip. */
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

#include "config.h"
#include "helpers.h"
#include "log.h"

static const char good_text[] =
	"# sample\n"
	"; also a comment\n"
	"[target]\n"
	"listen_tcp = 127.0.0.1:4420, [::1]:4421   # two listeners\n"
	"listen_rdma = 10.0.0.1:4421\n"
	"reactors = 3\n"
	"log_level = warn\n"
	"max_queue_depth = 256\n"
	"reactor_buffer_mb = 32\n"
	"login_timeout = 0\n"
	"idle_timeout = 0\n"
	"data_timeout = 5\n"
	"stall_timeout = 2\n"
	"max_connections = 100\n"
	"max_connections_per_host = 7\n"
	"conn_buffer_mb = 3\n"
	"host_buffer_mb = 9\n"
	"max_prelogin = 0\n"
	"max_prelogin_per_host = 5\n"
	"\n"
	"[volume vol0]\n"
	"path = /srv/rblk/vol0.img\n"
	"size = 10G\n"
	"backend = aio\n"
	"read_only = yes\n"
	"created_file = /srv/rblk/vol0.img\n"
	"\n"
	"[volume db:1]\r\n"
	"  path=/dev/sdb  \n"
	"direct = off\n"
	"[volume n]\n"
	"backend = null\n"
	"size = 1M\n";

static void test_valid_configs_parse(void **state)
{
	struct tgt_config cfg;
	char err[256];

	assert_int_equal(tgt_config_parse(good_text, "t.conf", &cfg, err,
					  sizeof(err)), 0);
	assert_int_equal(cfg.n_listen_tcp, 2);
	assert_string_equal(cfg.listen_tcp[0], "127.0.0.1:4420");
	assert_string_equal(cfg.listen_tcp[1], "[::1]:4421");
	assert_string_equal(cfg.listen_rdma, "10.0.0.1:4421");
	assert_int_equal(cfg.reactors, 3);
	assert_int_equal(cfg.log_level, RBLK_LOG_WARN);
	assert_int_equal(cfg.max_queue_depth, 256);
	assert_int_equal(cfg.buffer_mb, 32);
	assert_int_equal(cfg.n_vols, 3);
	assert_string_equal(cfg.vols[0].name, "vol0");
	assert_string_equal(cfg.vols[0].path, "/srv/rblk/vol0.img");
	assert_true(cfg.vols[0].size == 10ull << 30);
	assert_string_equal(cfg.vols[0].backend, "aio");
	assert_true(cfg.vols[0].read_only);
	assert_int_equal(cfg.login_timeout, 0);
	assert_int_equal(cfg.idle_timeout, 0);
	assert_int_equal(cfg.data_timeout, 5);
	assert_int_equal(cfg.stall_timeout, 2);
	assert_int_equal(cfg.max_conns, 100);
	assert_int_equal(cfg.max_conns_host, 7);
	assert_int_equal(cfg.conn_buffer_mb, 3);
	assert_int_equal(cfg.host_buffer_mb, 9);
	assert_int_equal(cfg.max_prelogin, 0);
	assert_int_equal(cfg.max_prelogin_per_host, 5);
	assert_int_equal(cfg.vols[0].line, 21);
	assert_string_equal(cfg.vols[1].name, "db:1");
	assert_string_equal(cfg.vols[1].path, "/dev/sdb");
	assert_true(cfg.vols[1].size == 0);
	assert_string_equal(cfg.vols[1].backend, "uring");
	assert_false(cfg.vols[1].read_only);
	/* direct defaults to yes; "off" turns it to buffered. */
	assert_false(cfg.vols[0].buffered);
	assert_true(cfg.vols[1].buffered);
	assert_false(cfg.vols[2].buffered);
	assert_null(cfg.vols[2].path);
	assert_non_null(tgt_config_find_volume(&cfg, "db:1"));
	assert_null(tgt_config_find_volume(&cfg, "nope"));
	tgt_config_free(&cfg);
}

static void test_defaults(void **state)
{
	struct tgt_config cfg;
	char err[256];

	assert_int_equal(tgt_config_parse("", "e.conf", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_vols, 0);
	assert_int_equal(cfg.n_listen_tcp, 0);
	assert_null(cfg.listen_rdma);
	assert_int_equal(cfg.reactors, 0);
	assert_int_equal(cfg.log_level, -1);
	assert_int_equal(cfg.max_queue_depth, RBLK_MAX_QUEUE_DEPTH);
	assert_int_equal(cfg.login_timeout, TGT_CFG_DEFAULT_LOGIN_TIMEOUT);
	assert_int_equal(cfg.idle_timeout, TGT_CFG_DEFAULT_IDLE_TIMEOUT);
	assert_int_equal(cfg.data_timeout, TGT_CFG_DEFAULT_DATA_TIMEOUT);
	assert_int_equal(cfg.stall_timeout, TGT_CFG_DEFAULT_STALL_TIMEOUT);
	assert_int_equal(cfg.max_conns, TGT_CFG_DEFAULT_MAX_CONNS);
	assert_int_equal(cfg.max_conns_host, TGT_CFG_DEFAULT_MAX_CONNS_HOST);
	assert_int_equal(cfg.conn_buffer_mb, 0);
	assert_int_equal(cfg.host_buffer_mb, 0);
	assert_int_equal(cfg.max_prelogin, TGT_CFG_DEFAULT_MAX_PRELOGIN);
	assert_int_equal(cfg.max_prelogin_per_host, TGT_CFG_DEFAULT_MAX_PRELOGIN_HOST);
	tgt_config_free(&cfg);
	/* empty values are allowed for the listeners */
	assert_int_equal(tgt_config_parse("[target]\nlisten_tcp =\nlisten_rdma =\n",
					  "e.conf", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_listen_tcp, 0);
	assert_null(cfg.listen_rdma);
	tgt_config_free(&cfg);
}

/* Each bad config: text, the line the error must name, a fragment. */
static const struct {
	const char *text;
	int line;
	const char *frag;
} bad[] = {
	{ "[targett]\n", 1, "unknown section" },
	{ "[target]\nlisten = 1.2.3.4:5\n", 2, "unknown field 'listen'" },
	{ "[volume v]\npath = /x\ncolour = red\n", 3, "unknown field 'colour'" },
	{ "[volume v]\npath = /x\ncreated_file = x.img\n", 3, "field 'created_file'" },
	{ "reactors = 1\n", 1, "outside of any section" },
	{ "[target]\nreactors\n", 2, "expected 'key = value'" },
	{ "[target]\n = 4\n", 2, "missing key" },
	{ "[target\n", 1, "lacks ']'" },
	{ "[target]\n[target]\n", 2, "appears twice" },
	{ "[volume a]\npath=/a\n[volume a]\npath=/b\n", 3, "duplicate volume name" },
	{ "[volume -bad]\npath=/a\n", 1, "invalid volume name" },
	{ "[volume a/b]\npath=/a\n", 1, "invalid volume name" },
	{ "[volume ..]\npath=/a\n", 1, "invalid volume name" },
	{ "[volume]\n", 1, "unknown section" },
	{ "[volume 0123456789012345678901234567890123456789012345678901234567890123]\n", 1, "invalid volume name" },
	{ "[target]\nreactors = 1\nreactors = 2\n", 3, "given twice" },
	{ "[target]\nlisten_tcp = 127.0.0.1\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = 127.0.0.1:0\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = 127.0.0.1:70000\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = :4420\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = ::1:4420\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = [::1:4420\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = 1.2.3.4:x\n", 2, "'listen_tcp'" },
	{ "[target]\nlisten_tcp = a:1, a:1\n", 2, "listed twice" },
	{ "[target]\nlisten_tcp = a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9,a:10,a:11,a:12,a:13,a:14,a:15,a:16,a:17\n", 2, "more than" },
	{ "[target]\nreactors = -1\n", 2, "'reactors'" },
	{ "[target]\nreactors = many\n", 2, "'reactors'" },
	{ "[target]\ntcp_zero_copy = yes\n", 2, "is not auto|on|off" },
	{ "[target]\nreactors = 257\n", 2, "'reactors'" },
	{ "[target]\nlog_level = chatty\n", 2, "'log_level'" },
	{ "[target]\nmax_queue_depth = 0\n", 2, "'max_queue_depth'" },
	{ "[target]\nmax_queue_depth = 1025\n", 2, "'max_queue_depth'" },
	{ "[target]\nreactor_buffer_mb = 3\n", 2, "'reactor_buffer_mb'" },
	{ "[target]\nlogin_timeout = 3601\n", 2, "'login_timeout'" },
	{ "[target]\nlogin_timeout = soon\n", 2, "'login_timeout'" },
	{ "[target]\nidle_timeout = 86401\n", 2, "'idle_timeout'" },
	{ "[target]\ndata_timeout = -1\n", 2, "'data_timeout'" },
	{ "[target]\nstall_timeout = 3601\n", 2, "'stall_timeout'" },
	{ "[target]\nmax_connections = 0\n", 2, "'max_connections'" },
	{ "[target]\nmax_connections_per_host = 0\n", 2, "'max_connections_per_host'" },
	{ "[target]\nconn_buffer_mb = 65537\n", 2, "'conn_buffer_mb'" },
	{ "[target]\nhost_buffer_mb = lots\n", 2, "'host_buffer_mb'" },
	{ "[target]\nmax_prelogin = 65537\n", 2, "'max_prelogin'" },
	{ "[target]\nmax_prelogin_per_host = -1\n", 2, "'max_prelogin_per_host'" },
	{ "[volume v]\npath =\n", 2, "'path' is empty" },
	{ "[volume v]\npath = rel/x\n", 2, "not an absolute path" },
	{ "[volume v]\npath = /x\nsize = big\n", 3, "'size'" },
	{ "[volume v]\npath = /x\nsize = 0\n", 3, "'size'" },
	{ "[volume v]\npath = /x\nsize = 1000\n", 3, "multiple of 512" },
	{ "[volume v]\npath = /x\nsize = 99999999999999999999\n", 3, "'size'" },
	{ "[volume v]\npath = /x\nbackend = spdk\n", 3, "unknown backend 'spdk'" },
	{ "[volume v]\npath = /x\nread_only = maybe\n", 3, "'read_only'" },
	{ "[volume v]\npath = /x\ndirect = sometimes\n", 3, "'direct'" },
	{ "[volume v]\npath = /x\ndirect =\n", 3, "'direct'" },
	{ "[volume v]\npath = /x\ndirect = no\ndirect = yes\n", 4, "given twice" },
	{ "[volume v]\nsize = 1G\n", 1, "'path' is missing" },
	{ "[volume v]\nsize = 1G\n[volume w]\npath=/w\n", 1, "'path' is missing" },
	{ "[volume v]\nbackend = null\n", 1, "needs field 'size'" },
};

static void test_invalid_configs_refused(void **state)
{
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tgt_config cfg;
		char err[256], want[32];

		err[0] = '\0';
		assert_int_equal(tgt_config_parse(bad[i].text, "bad.conf", &cfg,
						  err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "bad.conf:%d: ", bad[i].line);
		if (strncmp(err, want, strlen(want)) || !strstr(err, bad[i].frag))
			fail_msg("case %u: got \"%s\", want \"%s...%s\"", i, err,
				 want, bad[i].frag);
		/* A refused parse leaves nothing allocated behind. */
		assert_int_equal(cfg.n_vols, 0);
		assert_null(cfg.vols);
		assert_int_equal(cfg.n_listen_tcp, 0);
	}
}

static void test_round_trip(void **state)
{
	struct tgt_config a, b;
	char err[256], *t1, *t2;

	assert_int_equal(tgt_config_parse(good_text, "t.conf", &a, err, sizeof(err)), 0);
	t1 = tgt_config_format(&a);
	assert_non_null(t1);
	assert_int_equal(tgt_config_parse(t1, "fmt", &b, err, sizeof(err)), 0);
	t2 = tgt_config_format(&b);
	assert_non_null(t2);
	assert_string_equal(t1, t2);
	assert_int_equal(b.n_vols, a.n_vols);
	assert_int_equal(b.n_listen_tcp, a.n_listen_tcp);
	assert_string_equal(b.listen_rdma, a.listen_rdma);
	assert_int_equal(b.reactors, a.reactors);
	assert_int_equal(b.log_level, a.log_level);
	assert_int_equal(b.max_queue_depth, a.max_queue_depth);
	assert_int_equal(b.buffer_mb, a.buffer_mb);
	assert_int_equal(b.login_timeout, a.login_timeout);
	assert_int_equal(b.idle_timeout, a.idle_timeout);
	assert_int_equal(b.data_timeout, a.data_timeout);
	assert_int_equal(b.stall_timeout, a.stall_timeout);
	assert_int_equal(b.max_conns, a.max_conns);
	assert_int_equal(b.max_conns_host, a.max_conns_host);
	assert_int_equal(b.conn_buffer_mb, a.conn_buffer_mb);
	assert_int_equal(b.host_buffer_mb, a.host_buffer_mb);
	assert_int_equal(b.max_prelogin, a.max_prelogin);
	assert_int_equal(b.max_prelogin_per_host, a.max_prelogin_per_host);
	for (unsigned i = 0; i < a.n_vols; i++) {
		assert_string_equal(a.vols[i].name, b.vols[i].name);
		if (a.vols[i].path)
			assert_string_equal(a.vols[i].path, b.vols[i].path);
		else
			assert_null(b.vols[i].path);
		assert_true(a.vols[i].size == b.vols[i].size);
		assert_string_equal(a.vols[i].backend, b.vols[i].backend);
		assert_int_equal(a.vols[i].read_only, b.vols[i].read_only);
		assert_int_equal(a.vols[i].buffered, b.vols[i].buffered);
	}
	/* What lets volume delete remove a file survives the rewrite. */
	assert_string_equal(b.vols[0].created_file, "/srv/rblk/vol0.img");
	assert_null(b.vols[1].created_file);
	assert_non_null(strstr(t1, "size = 10G\n"));
	/* Only the non-default is written, and only for that volume. */
	assert_non_null(strstr(t1, "[volume db:1]\npath = /dev/sdb\nbackend = uring\nread_only = no\ndirect = no\n"));
	assert_null(strstr(strstr(t1, "direct = no\n") + 1, "direct ="));
	free(t1);
	free(t2);
	tgt_config_free(&a);
	tgt_config_free(&b);
}

/*
 * Every [target] key is in the config man page, and every key that is set
 * to a value other than its default is written back: a key added to the
 * table is documented and survives a rewrite, or this fails.
 */
static void test_keys_documented_and_written(void **state)
{
	const char *root = getenv("RBLK_ROOT");
	char path[4096], *doc, *t, want[80], err[256];
	struct tgt_config cfg;
	FILE *f;
	long n;
	unsigned i;

	if (!root)
		skip();		/* tests/run sets it; run alone: RBLK_ROOT=. */
	snprintf(path, sizeof(path), "%s/docs/man/rblk-target.conf.5.scd", root);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	doc = calloc(1, n + 1);
	assert_non_null(doc);
	assert_int_equal(fread(doc, 1, n, f), (size_t)n);
	fclose(f);
	for (i = 0; tgt_config_target_key(i); i++) {
		snprintf(want, sizeof(want), "*%s*", tgt_config_target_key(i));
		if (!strstr(doc, want))
			fail_msg("%s does not document [target] key %s", path, want);
	}
	assert_true(i >= 20);
	free(doc);

	/* A value off the default for each number key, read and written. */
	assert_int_equal(tgt_config_parse(
		"[target]\nlisten_tcp = 127.0.0.1:4420\nreactors = 3\nlog_level = debug\n"
		"max_queue_depth = 7\nreactor_buffer_mb = 5\nadmin_socket = /a\n"
		"volume_dir = /v\nlogin_timeout = 11\nrdma_poll = busy\nrdma_poll_us = 51\n"
		"idle_timeout = 61\ndata_timeout = 31\nstall_timeout = 6\n"
		"max_connections = 99\nmax_connections_per_host = 98\nconn_buffer_mb = 2\n"
		"host_buffer_mb = 3\nmax_prelogin = 97\nmax_prelogin_per_host = 96\n"
		"listen_rdma = 10.0.0.1:4421\ntcp_zero_copy = auto\n", "t", &cfg,
		err, sizeof(err)), 0);
	assert_int_equal(cfg.tcp_zero_copy, TGT_TCP_ZC_AUTO);
	t = tgt_config_format(&cfg);
	assert_non_null(t);
	for (i = 0; tgt_config_target_key(i); i++) {
		snprintf(want, sizeof(want), "\n%s = ", tgt_config_target_key(i));
		if (!strstr(t, want))
			fail_msg("key %s set off its default is not written back", tgt_config_target_key(i));
	}
	free(t);
	tgt_config_free(&cfg);
}

static void test_load(void **state)
{
	char path[] = "/tmp/rblk-cfg-XXXXXX", err[256];
	struct tgt_config cfg;
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(good_text, f);
	fclose(f);
	assert_int_equal(tgt_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_vols, 3);
	tgt_config_free(&cfg);
	unlink(path);
	assert_int_equal(tgt_config_load(path, &cfg, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_int_equal(tgt_config_load("/tmp", &cfg, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_configs_parse),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_invalid_configs_refused),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_keys_documented_and_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
