// SPDX-License-Identifier: MIT
/*
 * How connections share a reactor's pool (target/bufshare.c), with real
 * connections (tgt_conn_init) on a fake transport and a real reactor run
 * by hand: caps, the line (the connection whose address holds least is
 * served first), a newcomer from a rich address waiting behind a poorer
 * waiter, taking back memory pinned without progress while someone
 * waits, and stall_timeout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "bufshare.h"
#include "conn.h"
#include "hosts.h"
#include "server.h"

#define MiB	(1u << 20)

struct fake {
	struct tgt_conn c;		/* first: conn.c's view */
	int resumed;			/* resume() calls */
	int order;			/* when last resumed (resume_seq) */
	bool forced;			/* shutdown(force) seen */
	bool freed;
};

static int resume_seq;

static struct fake *fk(struct tgt_conn *c)
{
	return (struct fake *)c;
}

static void f_resume(struct tgt_conn *c)
{
	fk(c)->resumed++;
	fk(c)->order = ++resume_seq;
}

static void f_shutdown(struct tgt_conn *c, bool force)
{
	if (force)
		fk(c)->forced = true;
}

static void f_free(struct tgt_conn *c)
{
	fk(c)->freed = true;	/* the test owns the memory */
}

static int f_send_pdu(struct tgt_conn *c, const void *pdu, size_t len)
{
	return 0;
}

static const struct tgt_transport_ops fake_ops = {
	.name = "fake", .resume = f_resume, .shutdown = f_shutdown,
	.free = f_free, .send_pdu = f_send_pdu,
};

static struct tgt_server srv;
static struct tgt_reactor *r;

static int setup(void **state)
{
	struct tgt_reactor_params p = { .id = 0, .buffer_bytes = 4 * MiB,
					.priv = &srv };

	memset(&srv, 0, sizeof(srv));
	tgt_config_init(&srv.cfg);
	srv.cfg.login_timeout = 0;
	srv.conn_cap = 2 * MiB;
	srv.host_cap = 2 * MiB;
	if (tgt_hosts_create(&srv.hosts, 1, 100, 100, 0, 0))
		return -1;
	return tgt_reactor_create(&r, &p);
}

static int teardown(void **state)
{
	tgt_reactor_destroy(r);
	tgt_hosts_destroy(srv.hosts);
	return 0;
}

static struct fake *conn_from(const char *ip)
{
	struct fake *f = tgt_conn_alloc(sizeof(*f));
	struct sockaddr_in sa = { .sin_family = AF_INET };

	assert_non_null(f);
	inet_pton(AF_INET, ip, &sa.sin_addr);
	tgt_conn_init(&f->c, &fake_ops, &srv, r, ip, (struct sockaddr *)&sa);
	return f;
}

/* Runs what is due now: deferred resumes, grants. */
static void turns(int n)
{
	for (int i = 0; i < n; i++)
		assert_true(tgt_reactor_run_once(r, false) >= 0);
}

static void *take(struct fake *f, uint32_t len, uint32_t *cap)
{
	return tgt_share_take(&f->c, len, len, 0, cap);
}

/* Takes len or waits (as conn.c does); the chunk, or NULL when waiting. */
static void *take_or_wait(struct fake *f, uint32_t len, uint32_t *cap)
{
	void *p = take(f, len, cap);

	if (!p)
		tgt_share_wait(&f->c);
	return p;
}

static void gone(struct fake *f)
{
	tgt_conn_close(&f->c, true, NULL);
	turns(4);
	assert_true(f->freed);
	free(f);
}

static void test_caps_and_line(void **state)
{
	struct fake *a = conn_from("10.0.0.2"), *b = conn_from("10.0.0.2");
	struct fake *c = conn_from("10.0.0.3"), *d = conn_from("10.0.0.4");
	uint32_t cap, cap_c;
	void *a1, *a2, *c1, *c1b, *gd, *gb, *c2, *gd2;

	/* Over its own cap: a waits for its own memory, outside the line. */
	a1 = take(a, MiB, &cap);
	a2 = take(a, MiB, &cap);
	assert_non_null(a1);
	assert_non_null(a2);
	assert_null(take_or_wait(a, 4096, &cap));
	assert_int_equal(a->c.share.wait, TGT_SHARE_OWN);
	assert_null(tgt_reactor_share(r)->line);
	/* a holds its host's share: b, same host, waits in line for it. */
	assert_null(take_or_wait(b, MiB, &cap));
	assert_int_equal(b->c.share.wait, TGT_SHARE_LINE);
	/* c (another host) takes the rest of the pool (1 MiB chunks: the
	 * largest there are). */
	c1 = take(c, MiB, &cap_c);
	c1b = take(c, MiB, &cap_c);
	assert_non_null(c1);
	assert_non_null(c1b);
	/* d holds nothing: it waits too, ahead of b. */
	assert_null(take_or_wait(d, 4096, &cap));
	assert_ptr_equal(tgt_reactor_share(r)->line, &d->c);

	/* a gives a MiB back: a is resumed (its own memory), d is served
	 * (its address holds least) and b, whose host has room now, is not:
	 * d's chunk split the only free MiB, and b does not pass d. */
	tgt_share_put(&a->c, a2, MiB);
	turns(3);
	assert_int_equal(a->resumed, 1);
	assert_int_equal(d->resumed, 1);
	assert_int_equal(b->resumed, 0);
	gd = take(d, 4096, &cap);		/* the grant */
	assert_non_null(gd);
	assert_null(d->c.share.grant);
	/* c's 2 MiB come back: b gets its MiB. */
	tgt_share_put(&c->c, c1, MiB);
	tgt_share_put(&c->c, c1b, MiB);
	turns(3);
	assert_int_equal(b->resumed, 1);
	gb = take(b, MiB, &cap);
	assert_non_null(gb);

	/* a, b and c hold a MiB each, d 4 KiB of the fourth: no free MiB is
	 * whole.  d waits for one; c, whose host holds more than d's, does
	 * not take the small pieces free meanwhile. */
	c2 = take(c, MiB, &cap_c);
	assert_non_null(c2);
	assert_null(take_or_wait(d, MiB, &cap));
	assert_null(take(c, 4096, &cap));
	/* c's MiB back: it is d's. */
	tgt_share_put(&c->c, c2, cap_c);
	turns(3);
	assert_int_equal(d->resumed, 2);
	gd2 = take(d, MiB, &cap);
	assert_non_null(gd2);
	/* Nobody in line: c takes directly again. */
	c2 = take(c, 4096, &cap_c);
	assert_non_null(c2);
	tgt_share_put(&c->c, c2, cap_c);
	tgt_share_put(&b->c, gb, MiB);
	tgt_share_put(&a->c, a1, MiB);
	tgt_share_put(&d->c, gd2, cap);
	tgt_share_put(&d->c, gd, 4096);
	gone(a);
	gone(b);
	gone(c);
	gone(d);
	assert_int_equal(tgt_bufpool_in_use(tgt_reactor_pool(r)), 0);
}

/*
 * Pinned memory that does not move for TGT_SHARE_EVICT_MS while someone
 * waits in line: its connection is closed, the longest stalled first, and
 * the waiter gets the memory once it is back.  Memory that moves is kept.
 */
static void test_take_back(void **state)
{
	struct fake *hog = conn_from("10.0.0.2"), *busy = conn_from("10.0.0.3");
	struct fake *w = conn_from("10.0.0.4");
	void *h[2], *b[2], *g;
	uint32_t cap;
	uint64_t t0;

	turns(1);
	/* The pool (4 MiB) is theirs: the hog's payloads never arrive,
	 * busy's answers keep moving. */
	for (int i = 0; i < 2; i++) {
		h[i] = take(hog, MiB, &cap);
		b[i] = take(busy, MiB, &cap);
		assert_non_null(h[i]);
		assert_non_null(b[i]);
		tgt_share_pin(&hog->c, TGT_PIN_RX, MiB, false);
		tgt_share_pin(&busy->c, TGT_PIN_TX, MiB, false);
	}
	assert_null(take_or_wait(w, 4096, &cap));
	t0 = (uint64_t)rblk_now_ms();
	while (!hog->forced && (uint64_t)rblk_now_ms() - t0 < 3000) {
		assert_true(tgt_reactor_run_once(r, true) >= 0);
		tgt_share_pin(&busy->c, TGT_PIN_TX, 0, true);	/* it moved */
	}
	assert_true(hog->forced);
	assert_false(busy->forced);
	assert_true((uint64_t)rblk_now_ms() - t0 >= TGT_SHARE_EVICT_MS - 100);
	assert_int_equal(w->resumed, 0);	/* nothing is back yet */
	/* The hog's chunks come back: the waiter is served. */
	for (int i = 0; i < 2; i++) {
		tgt_share_pin(&hog->c, TGT_PIN_RX, -(long)MiB, false);
		tgt_share_put(&hog->c, h[i], MiB);
	}
	turns(3);
	assert_int_equal(w->resumed, 1);
	g = take(w, 4096, &cap);
	assert_non_null(g);
	tgt_share_put(&w->c, g, cap);
	for (int i = 0; i < 2; i++) {
		tgt_share_pin(&busy->c, TGT_PIN_TX, -(long)MiB, true);
		tgt_share_put(&busy->c, b[i], MiB);
	}
	turns(4);
	assert_true(hog->freed);
	free(hog);
	gone(busy);
	gone(w);
	assert_int_equal(tgt_bufpool_in_use(tgt_reactor_pool(r)), 0);
}

/* A payload does not age while its connection waits in line (the target
 * is not reading it); answers age whatever else happens. */
static void test_stall_clock(void **state)
{
	struct fake *a = conn_from("10.0.0.2");
	struct tgt_conn_share *s = &a->c.share;
	uint64_t now = tgt_reactor_now_ms(r);

	s->pin[TGT_PIN_RX] = 4096;
	s->moved_ms[TGT_PIN_RX] = now - 5000;
	s->rx_line0 = 0;
	assert_true(tgt_share_stalled_ms(&a->c, TGT_PIN_RX, now) >= 5000);
	s->line_ms = 4000;		/* 4 s of that in line */
	assert_int_equal(tgt_share_stalled_ms(&a->c, TGT_PIN_RX, now), 1000);
	s->pin[TGT_PIN_TX] = 4096;
	s->moved_ms[TGT_PIN_TX] = now - 5000;
	assert_int_equal(tgt_share_stalled_ms(&a->c, TGT_PIN_TX, now), 5000);
	s->pin[TGT_PIN_RX] = s->pin[TGT_PIN_TX] = 0;
	assert_int_equal(tgt_share_stalled_ms(&a->c, TGT_PIN_TX, now), 0);
	gone(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_caps_and_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_clock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
