// SPDX-License-Identifier: MIT
/*
 * The target config keys of the RDMA transport: listen_rdma is kept as
 * given, rdma_poll takes event|busy|adaptive only, rdma_poll_us a number of
 * microseconds, and all survive the round trip through tgt_config_format
 * (which is how the admin socket persists).
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

#include "config.h"
#include "helpers.h"

/* Parses text, formats it and parses that again into *again. */
static void round_trip(const char *text, struct tgt_config *cfg,
		       struct tgt_config *again, char **dump)
{
	char err[256];

	tgt_config_init(cfg);
	assert_int_equal(tgt_config_parse(text, "r.conf", cfg, err, sizeof(err)), 0);
	*dump = tgt_config_format(cfg);
	assert_non_null(*dump);
	tgt_config_init(again);
	assert_int_equal(tgt_config_parse(*dump, "again.conf", again, err, sizeof(err)), 0);
}

static void rdma_poll_busy(void **state)
{
	struct tgt_config cfg, again;
	char *text;

	round_trip("[target]\nlisten_rdma = 10.0.0.1:4421\nrdma_poll = busy\n",
		   &cfg, &again, &text);
	assert_int_equal(cfg.rdma_poll, RBLK_POLL_BUSY);
	assert_string_equal(cfg.listen_rdma, "10.0.0.1:4421");
	assert_non_null(strstr(text, "rdma_poll = busy"));
	assert_int_equal(again.rdma_poll, RBLK_POLL_BUSY);
	assert_string_equal(again.listen_rdma, "10.0.0.1:4421");
	free(text);
	tgt_config_free(&again);
	tgt_config_free(&cfg);
}

static void rdma_poll_adaptive(void **state)
{
	struct tgt_config cfg, again;
	char *text;

	round_trip("[target]\nrdma_poll = adaptive\nrdma_poll_us = 200\n",
		   &cfg, &again, &text);
	assert_int_equal(cfg.rdma_poll, RBLK_POLL_ADAPTIVE);
	assert_int_equal(cfg.rdma_poll_us, 200);
	assert_non_null(strstr(text, "rdma_poll = adaptive"));
	assert_non_null(strstr(text, "rdma_poll_us = 200"));
	assert_int_equal(again.rdma_poll, RBLK_POLL_ADAPTIVE);
	assert_int_equal(again.rdma_poll_us, 200);
	free(text);
	tgt_config_free(&again);
	tgt_config_free(&cfg);
}

static void rdma_poll_default_and_bad(void **state)
{
	struct tgt_config cfg;
	char err[256], *text;

	tgt_config_init(&cfg);
	assert_int_equal(cfg.rdma_poll, RBLK_POLL_EVENT);
	assert_int_equal(cfg.rdma_poll_us, RBLK_POLL_US_DEFAULT);
	/* Defaults are not written out. */
	text = tgt_config_format(&cfg);
	assert_non_null(text);
	assert_null(strstr(text, "rdma_poll"));
	free(text);
	assert_int_equal(tgt_config_parse("[target]\nrdma_poll = event\n", "r.conf",
					  &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.rdma_poll, RBLK_POLL_EVENT);
	tgt_config_free(&cfg);

	tgt_config_init(&cfg);
	assert_int_equal(tgt_config_parse("[target]\nrdma_poll = spin\n", "r.conf",
					  &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rdma_poll"));
	assert_non_null(strstr(err, "event|busy|adaptive"));
	assert_non_null(strstr(err, "r.conf:2"));
	tgt_config_free(&cfg);

	static const char *const bad_us[] = { "-1", "abc", "1000001", "10us", "" };

	for (unsigned i = 0; i < ARRAY_SIZE(bad_us); i++) {
		char text2[128];

		snprintf(text2, sizeof(text2), "[target]\nrdma_poll_us = %s\n", bad_us[i]);
		tgt_config_init(&cfg);
		assert_int_equal(tgt_config_parse(text2, "r.conf", &cfg, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "rdma_poll_us"));
		assert_int_equal(cfg.rdma_poll_us, RBLK_POLL_US_DEFAULT);
		tgt_config_free(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rdma_poll_busy),
		cmocka_unit_test(rdma_poll_adaptive),
		cmocka_unit_test(rdma_poll_default_and_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
