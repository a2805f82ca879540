// SPDX-License-Identifier: MIT
/*
 * The target config keys of the RDMA transport: listen_rdma is kept as
 * given, rdma_poll takes event|busy only, and both survive the round trip
 * through tgt_config_format (which is how the admin socket persists).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"

static void rdma_poll_busy(void **state)
{
	struct tgt_config cfg, again;
	char err[256], *text;

	tgt_config_init(&cfg);
	assert_int_equal(tgt_config_parse("[target]\nlisten_rdma = 10.0.0.1:4421\nrdma_poll = busy\n",
					  "r.conf", &cfg, err, sizeof(err)), 0);
	assert_true(cfg.rdma_busy_poll);
	assert_string_equal(cfg.listen_rdma, "10.0.0.1:4421");
	text = tgt_config_format(&cfg);
	assert_non_null(text);
	assert_non_null(strstr(text, "rdma_poll = busy"));
	tgt_config_init(&again);
	assert_int_equal(tgt_config_parse(text, "again.conf", &again, err, sizeof(err)), 0);
	assert_true(again.rdma_busy_poll);
	assert_string_equal(again.listen_rdma, "10.0.0.1:4421");
	free(text);
	tgt_config_free(&again);
	tgt_config_free(&cfg);
}

static void rdma_poll_default_and_bad(void **state)
{
	struct tgt_config cfg;
	char err[256];

	tgt_config_init(&cfg);
	assert_int_equal(tgt_config_parse("[target]\nrdma_poll = event\n", "r.conf",
					  &cfg, err, sizeof(err)), 0);
	assert_false(cfg.rdma_busy_poll);
	tgt_config_free(&cfg);

	tgt_config_init(&cfg);
	assert_int_equal(tgt_config_parse("[target]\nrdma_poll = spin\n", "r.conf",
					  &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rdma_poll"));
	assert_non_null(strstr(err, "r.conf:2"));
	tgt_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rdma_poll_busy),
		cmocka_unit_test(rdma_poll_default_and_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
