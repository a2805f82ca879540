// SPDX-License-Identifier: MIT
/* Per-host connection counts, pre-login counts and pool shares
 * (target/hosts.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hosts.h"

static struct sockaddr_in v4(const char *a)
{
	struct sockaddr_in s = { .sin_family = AF_INET };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static struct sockaddr_in6 v6(const char *a)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6 };

	inet_pton(AF_INET6, a, &s.sin6_addr);
	return s;
}

static void test_per_host_limit(void **state)
{
	struct sockaddr_in a = v4("10.0.0.1"), b = v4("10.0.0.2");
	struct sockaddr_in6 a6 = v6("::ffff:10.0.0.1");
	struct tgt_host *h[4], *hb, *x;
	struct tgt_hosts *t;

	assert_int_equal(tgt_hosts_create(&t, 2, 100, 3, 0, 0), 0);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &h[0]), 0);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &h[1]), 0);
	/* v4-mapped v6 is the same host */
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a6, &h[2]), 0);
	assert_ptr_equal(h[0], h[2]);
	assert_int_equal(tgt_host_conns(h[0]), 3);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &x), -EMFILE);
	/* another host is not affected */
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&b, &hb), 0);
	assert_ptr_not_equal(hb, h[0]);
	/* per-reactor shares are separate */
	*tgt_host_buf_bytes(h[0], 0) += 4096;
	assert_int_equal(*tgt_host_buf_bytes(h[0], 1), 0);
	assert_int_equal(*tgt_host_buf_bytes(hb, 0), 0);
	*tgt_host_buf_bytes(h[0], 0) -= 4096;
	tgt_host_put(h[2]);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &h[3]), 0);
	tgt_host_put(h[0]);
	tgt_host_put(h[1]);
	tgt_host_put(h[3]);
	tgt_host_put(hb);
	tgt_hosts_destroy(t);
}

static void test_total_limit(void **state)
{
	struct sockaddr_in a = v4("10.0.0.1"), b = v4("10.0.0.2");
	struct tgt_host *h1, *h2, *x;
	struct tgt_hosts *t;

	assert_int_equal(tgt_hosts_create(&t, 1, 2, 10, 0, 0), 0);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &h1), 0);
	assert_int_equal(tgt_host_get(t, NULL, &h2), 0);	/* unknown peer */
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&b, &x), -ENFILE);
	tgt_host_put(h2);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&b, &h2), 0);
	tgt_host_put(h1);
	tgt_host_put(h2);
	tgt_hosts_destroy(t);
}

/* The pre-login caps, per host and in total, on the same entries as the
 * connection counts: an entry lives while either counter does. */
static void test_prelogin(void **state)
{
	struct sockaddr_in a = v4("10.0.0.1"), b = v4("10.0.0.2"), c = v4("10.0.0.3");
	struct sockaddr_in6 a6 = v6("::ffff:10.0.0.1");
	struct tgt_host *p[3], *pb, *pc, *h, *x;
	struct tgt_hosts *t;

	assert_int_equal(tgt_hosts_create(&t, 2, 100, 100, 4, 2), 0);
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&a, "tcp", "l", &p[0]), 0);
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&a6, "rdma", "l", &p[1]), 0);
	assert_ptr_equal(p[0], p[1]);
	/* per host: the third from a is refused, nothing counted */
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&a, "tcp", "l", &x), -EUSERS);
	assert_null(x);
	assert_int_equal(tgt_hosts_prelogin(t), 2);
	/* the connection counts share the entry and are not pre-login caps */
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &h), 0);
	assert_ptr_equal(h, p[0]);
	assert_int_equal(tgt_host_conns(h), 1);
	/* in total: 4 */
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&b, "tcp", "l", &pb), 0);
	assert_int_equal(tgt_host_prelogin_get(t, NULL, "tcp", "l", &pc), 0);	/* unknown */
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&c, "tcp", "l", &x), -EUSERS);
	/* a LOGIN frees a slot; the entry stays for its connection count */
	tgt_host_prelogin_put(p[0]);
	tgt_host_prelogin_put(p[1]);
	assert_int_equal(tgt_hosts_prelogin(t), 2);
	assert_int_equal(tgt_host_get(t, (struct sockaddr *)&a, &x), 0);
	assert_ptr_equal(x, h);
	assert_int_equal(tgt_host_conns(h), 2);
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&c, "tcp", "l", &p[2]), 0);
	tgt_host_put(x);
	tgt_host_put(h);
	/* a's entry is gone: a new one counts no connection; total 4 again */
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&a, "tcp", "l", &x), 0);
	assert_int_equal(tgt_host_conns(x), 0);
	assert_int_equal(tgt_hosts_prelogin(t), 4);
	assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&b, "tcp", "l", &h), -EUSERS);
	tgt_host_prelogin_put(x);
	tgt_host_prelogin_put(pb);
	tgt_host_prelogin_put(pc);
	tgt_host_prelogin_put(p[2]);
	tgt_host_prelogin_put(NULL);
	assert_int_equal(tgt_hosts_prelogin(t), 0);
	/* 0 = no cap; a NULL table counts nothing */
	tgt_hosts_destroy(t);
	assert_int_equal(tgt_hosts_create(&t, 1, 100, 100, 0, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tgt_host_prelogin_get(t, (struct sockaddr *)&a, "tcp", "l", &p[i]), 0);
	for (int i = 0; i < 3; i++)
		tgt_host_prelogin_put(p[i]);
	tgt_hosts_destroy(t);
	assert_int_equal(tgt_host_prelogin_get(NULL, (struct sockaddr *)&a, "tcp", "l", &x), 0);
	assert_null(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_host_limit),
		cmocka_unit_test(test_total_limit),
		cmocka_unit_test(test_prelogin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
