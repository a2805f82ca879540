// SPDX-License-Identifier: MIT
/* The one host:port parser (proto/hostport.c): the config's listeners,
 * the RDMA listener and the clients' --target all go through it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "hostport.h"

static void split_ok(const char *s, const char *host, unsigned port)
{
	char h[64];
	unsigned p = 12345;

	assert_int_equal(rblk_split_hostport(s, h, sizeof(h), &p), 0);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
}

static void test_accepted_forms(void **state)
{
	split_ok("1.2.3.4:80", "1.2.3.4", 80);
	split_ok("localhost:1", "localhost", 1);
	split_ok("10.0.0.1", "10.0.0.1", 0);		/* no port: the default */
	split_ok("[fe80::1]:4420", "fe80::1", 4420);
	split_ok("[fe80::1]", "fe80::1", 0);
	split_ok("fe80::1", "fe80::1", 0);		/* bare IPv6: no port */
	split_ok("h:65535", "h", 65535);
}

static void test_refused_forms(void **state)
{
	static const char *const bad[] = {
		"", "h:", "h:1x", "h:-1", "h:+1", "h: 1", "h:0", "h:65536",
		"h:99999999999", "[]:1", "[::1", "[::1]x", ":80", "[::1]:",
	};
	char h[64];
	unsigned p;

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rblk_split_hostport(bad[i], h, sizeof(h), &p), -EINVAL);
	/* A host that does not fit is refused, not cut. */
	assert_int_equal(rblk_split_hostport("0123456789:1", h, 8, &p), -EINVAL);
	assert_int_equal(rblk_split_hostport("0123456:1", h, 8, &p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_forms),
		cmocka_unit_test(test_refused_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
