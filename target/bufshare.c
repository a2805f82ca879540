// SPDX-License-Identifier: MIT
/*
 * Sharing a reactor's buffer pool among its connections (bufshare.h).
 *
 * Why a line and grants, not "wake everyone on every free": every waiter
 * retrying at once gave a freed chunk to whoever retried first, so a
 * connection that held nothing could lose to the 63 others of a host that
 * held half the pool, again and again.  The line is ordered by what the
 * waiter's host holds on this reactor (then by arrival); freed memory is
 * taken for the first in line that fits (its grant) before any other
 * connection may take it.  Connections that do not wait take memory
 * directly, unless someone poorer waits in line.
 *
 * Why close connections at all: caps bound how much one address may
 * hold, but two addresses may hold the whole pool between them, and
 * memory whose release waits on the client (a payload that never
 * completes, answers never read) comes back only when the client moves.
 * So when someone waits in line, the connection whose pinned memory has
 * not moved for the longest, TGT_SHARE_EVICT_MS at least, is closed:
 * honest clients move their memory within a round trip.
 */
#include "bufshare.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "hosts.h"
#include "limit_counts.h"
#include "log.h"
#include "server.h"

enum fit { FIT_OK, FIT_OWN_CAP, FIT_HOST_CAP, FIT_POOL };

static void serve_done(struct tgt_event *ev, int res, uint32_t flags);
static void relief_done(struct tgt_event *ev, int res, uint32_t flags);

static void share_init(struct tgt_share *s, struct tgt_reactor *r)
{
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->serve_ev.done = serve_done;
	s->relief_ev.done = relief_done;
}

/* A reactor's share is set up by its first use (the reactor holds the
 * memory and knows nothing more of it). */
static struct tgt_share *share_of(struct tgt_conn *c)
{
	struct tgt_share *s = tgt_reactor_share(c->r);

	if (!s->r)
		share_init(s, c->r);
	return s;
}

/* Pool bytes c's host holds on this reactor (c's own without a host). */
static size_t host_bytes(const struct tgt_conn *c)
{
	return c->phost ? *tgt_host_buf_bytes(c->phost, tgt_reactor_id(c->r))
			: c->share.bytes;
}

static enum fit fits(struct tgt_conn *c, size_t sz, size_t credit)
{
	size_t pool = tgt_bufpool_size(tgt_reactor_pool(c->r));
	size_t conn_cap = c->srv->conn_cap ? c->srv->conn_cap : pool / 2;

	if (c->share.bytes - credit + sz > conn_cap)
		return FIT_OWN_CAP;
	if (c->phost && c->srv->host_cap &&
	    host_bytes(c) - credit + sz > c->srv->host_cap)
		return FIT_HOST_CAP;
	return FIT_OK;
}

static void charge(struct tgt_conn *c, long sz)
{
	c->share.bytes += sz;
	if (c->phost)
		*tgt_host_buf_bytes(c->phost, tgt_reactor_id(c->r)) += sz;
}

static void serve_later(struct tgt_share *s)
{
	if (s->serve_queued || !s->line)
		return;
	s->serve_queued = true;
	tgt_reactor_defer(s->r, &s->serve_ev, 0);
}

static void line_unlink(struct tgt_share *s, struct tgt_conn *c)
{
	for (struct tgt_conn **pp = &s->line; *pp; pp = &(*pp)->share.next) {
		if (*pp == c) {
			*pp = c->share.next;
			break;
		}
	}
	c->share.next = NULL;
}

/* c waits no more (out of line); true if it was waiting. */
static bool stop_waiting(struct tgt_conn *c)
{
	uint64_t waited = tgt_reactor_now_ms(c->r) - c->share.wait_since_ms;

	if (c->share.wait == TGT_SHARE_NONE)
		return false;
	if (c->share.wait == TGT_SHARE_LINE) {
		line_unlink(share_of(c), c);
		c->share.line_ms += waited;
	}
	c->share.wait = TGT_SHARE_NONE;
	c->share.paused_ms += waited;
	return true;
}

/* Ends c's wait: its resume runs on a later loop turn, with the
 * reference the wait held (one resume pending at most). */
static void wake(struct tgt_conn *c)
{
	if (!stop_waiting(c))
		return;
	if (c->share.ev_queued) {
		tgt_conn_put(c);
		return;
	}
	c->share.ev_queued = true;
	tgt_reactor_defer(c->r, &c->share.ev, 0);
}

static void resume_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_conn *c = (struct tgt_conn *)
		((char *)ev - offsetof(struct tgt_conn, share.ev));

	c->share.ev_queued = false;
	if (c->state != TGT_CONN_CLOSING || c->draining)
		c->ops->resume(c);
	else
		tgt_share_drop_grant(c);
	tgt_conn_put(c);
}

void *tgt_share_take(struct tgt_conn *c, uint32_t len, uint32_t need,
		     size_t credit, uint32_t *cap)
{
	struct tgt_share *s = share_of(c);
	size_t sz = tgt_buf_chunk_size(len);
	enum fit f;
	void *p;

	if (c->share.grant) {
		p = c->share.grant;
		c->share.grant = NULL;
		if (c->share.grant_cap >= tgt_buf_chunk_size(need)) {
			*cap = c->share.grant_cap;
			c->share.counted = false;
			return p;
		}
		tgt_share_put(c, p, c->share.grant_cap);
	}
	f = fits(c, sz, credit);
	/* Someone whose host holds less (or c's own host) waits in line:
	 * it is served first. */
	if (f == FIT_OK && s->line && s->line != c &&
	    host_bytes(c) >= host_bytes(s->line))
		f = FIT_POOL;
	if (f == FIT_OK) {
		p = tgt_buf_alloc(tgt_reactor_pool(c->r), len);
		if (p) {
			charge(c, (long)sz);
			*cap = (uint32_t)sz;
			c->share.counted = false;
			/* Taken while still waiting (RDMA offers a parked
			 * capsule again when an answer goes out). */
			if (stop_waiting(c))
				tgt_conn_put(c);
			return p;
		}
		f = FIT_POOL;
	}
	c->share.want = len;
	c->share.need = need;
	c->share.credit = credit;
	c->share.short_of = f == FIT_OWN_CAP ? TGT_SHARE_OWN : TGT_SHARE_LINE;
	return NULL;
}

void tgt_share_put(struct tgt_conn *c, void *buf, uint32_t cap)
{
	struct tgt_share *s = share_of(c);

	if (!buf)
		return;
	charge(c, -(long)cap);
	tgt_buf_free(tgt_reactor_pool(c->r), buf);
	if (c->share.evicted && !c->share.bytes) {
		c->share.evicted = false;
		s->evicting--;
	}
	if (c->share.wait == TGT_SHARE_OWN)
		wake(c);	/* its own memory came back */
	serve_later(s);
}

static void relief_arm(struct tgt_share *s);

void tgt_share_wait(struct tgt_conn *c)
{
	struct tgt_share *s = share_of(c);
	struct tgt_conn **pp;

	if (c->share.wait != TGT_SHARE_NONE)
		return;
	/* Counted once per stop, not per retry. */
	if (!c->share.counted)
		tgt_limit_count(TGT_LIM_BACKPRESSURE);
	c->share.counted = true;
	c->share.wait = c->share.short_of;
	c->share.wait_since_ms = tgt_reactor_now_ms(c->r);
	tgt_conn_get(c);	/* until its resume (wake) */
	if (c->share.wait == TGT_SHARE_OWN)
		return;
	c->share.key = host_bytes(c);
	c->share.seq = ++s->seq;
	for (pp = &s->line; *pp; pp = &(*pp)->share.next)
		if ((*pp)->share.key > c->share.key)
			break;
	c->share.next = *pp;
	*pp = c;
	/* Answers pin chunks until their send completions are taken, which
	 * a transport may hold back to save wakeups: not now. */
	for (struct tgt_conn *o = *tgt_reactor_conn_list(s->r); o; o = o->next)
		if (o->ops->reap)
			o->ops->reap(o);
	relief_arm(s);
}

bool tgt_share_someone_waits(struct tgt_reactor *r)
{
	return tgt_reactor_share(r)->line != NULL;
}

void tgt_share_drop_grant(struct tgt_conn *c)
{
	void *g = c->share.grant;

	if (!g)
		return;
	c->share.grant = NULL;
	tgt_share_put(c, g, c->share.grant_cap);
}

void tgt_share_cancel(struct tgt_conn *c)
{
	wake(c);	/* resume_done drops the reference (and a grant) */
	tgt_share_drop_grant(c);
}

/* Freed memory goes to the line in order; a waiter short of the pool
 * stops it (the first in line gets the next large chunk, not whoever
 * wants a small one), one over its host's share is passed over. */
static void serve_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_share *s = (struct tgt_share *)
		((char *)ev - offsetof(struct tgt_share, serve_ev));
	struct tgt_conn *c, *next;

	s->serve_queued = false;
	for (c = s->line; c; c = next) {
		size_t sz = tgt_buf_chunk_size(c->share.want);
		enum fit f = fits(c, sz, c->share.credit);
		void *p;

		next = c->share.next;
		if (f == FIT_OWN_CAP) {
			/* Its own memory is what it lacks now. */
			uint64_t now = tgt_reactor_now_ms(s->r);

			line_unlink(s, c);
			c->share.line_ms += now - c->share.wait_since_ms;
			c->share.paused_ms += now - c->share.wait_since_ms;
			c->share.wait_since_ms = now;
			c->share.wait = TGT_SHARE_OWN;
			continue;
		}
		if (f == FIT_HOST_CAP)
			continue;
		p = tgt_buf_alloc(tgt_reactor_pool(s->r), c->share.want);
		if (!p)
			break;
		charge(c, (long)sz);
		c->share.grant = p;
		c->share.grant_cap = (uint32_t)sz;
		wake(c);
	}
}

uint64_t tgt_share_paused_ms(const struct tgt_conn *c, uint64_t now)
{
	return c->share.paused_ms +
	       (c->share.wait != TGT_SHARE_NONE ? now - c->share.wait_since_ms : 0);
}

/* Time c spent in line (short of others' memory), so far. */
static uint64_t line_ms(const struct tgt_conn *c, uint64_t now)
{
	return c->share.line_ms +
	       (c->share.wait == TGT_SHARE_LINE ? now - c->share.wait_since_ms : 0);
}

void tgt_share_pin(struct tgt_conn *c, enum tgt_share_pin p, long delta,
		   bool moved)
{
	uint64_t now = tgt_reactor_now_ms(c->r);

	if ((delta > 0 && !c->share.pin[p]) || moved) {
		c->share.moved_ms[p] = now;
		if (p == TGT_PIN_RX)
			c->share.rx_line0 = line_ms(c, now);
	}
	c->share.pin[p] += delta;
}

uint64_t tgt_share_stalled_ms(const struct tgt_conn *c, enum tgt_share_pin p,
			      uint64_t now)
{
	uint64_t age;

	if (!c->share.pin[p])
		return 0;
	age = now - c->share.moved_ms[p];
	if (p == TGT_PIN_RX) {
		/* The target not reading for want of others' memory is not
		 * the client's stall; for want of its own it is. */
		uint64_t paused = line_ms(c, now) - c->share.rx_line0;

		age = age > paused ? age - paused : 0;
	}
	return age;
}

/* The connection to close for room: pinned memory that has not moved
 * for the longest, TGT_SHARE_EVICT_MS at least; host non-NULL: only
 * connections of that host (their memory is what that waiter lacks). */
static struct tgt_conn *victim(struct tgt_share *s, struct tgt_host *host)
{
	uint64_t now = tgt_reactor_now_ms(s->r), worst = TGT_SHARE_EVICT_MS;
	struct tgt_conn *v = NULL;

	for (struct tgt_conn *c = *tgt_reactor_conn_list(s->r); c; c = c->next) {
		uint64_t rx, tx;

		if (c->force_closed || c->share.evicted || (host && c->phost != host))
			continue;
		rx = tgt_share_stalled_ms(c, TGT_PIN_RX, now);
		tx = tgt_share_stalled_ms(c, TGT_PIN_TX, now);
		if (rx >= worst || tx >= worst) {
			worst = rx > tx ? rx : tx;
			v = c;
		}
	}
	return v;
}

static void evict(struct tgt_share *s, struct tgt_conn *v)
{
	uint64_t now = tgt_reactor_now_ms(s->r);
	uint64_t rx = tgt_share_stalled_ms(v, TGT_PIN_RX, now);
	uint64_t tx = tgt_share_stalled_ms(v, TGT_PIN_TX, now);
	char why[160];

	snprintf(why, sizeof(why),
		 "%zu KiB of buffers held %llu ms without progress (%s) while others wait for memory (buffer pressure)",
		 (v->share.pin[TGT_PIN_RX] + v->share.pin[TGT_PIN_TX]) >> 10,
		 (unsigned long long)(rx > tx ? rx : tx),
		 rx > tx ? "a WRITE payload that does not arrive" : "answers not taken");
	tgt_limit_count(TGT_LIM_CLOSED_BUFFER_PRESSURE);
	if (v->share.bytes) {
		v->share.evicted = true;
		s->evicting++;
	}
	v->share.evict(v, why);
}

/*
 * While anyone waits in line: make room by closing the stalled holder of
 * the memory the first waiter lacks (its host's, when its host's share is
 * what it lacks), or else of the pool, for the first waiter the pool is
 * short for; one at a time, the next only once the last one's chunks are
 * back.  At most two scans of the reactor's connections a period.
 */
static void relief_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_share *s = (struct tgt_share *)
		((char *)ev - offsetof(struct tgt_share, relief_ev));
	struct tgt_conn *head = s->line, *v = NULL;

	s->relief_armed = false;
	if (res == -ECANCELED || !head)
		return;
	if (!s->evicting) {
		struct tgt_conn *w = head;

		if (fits(head, tgt_buf_chunk_size(head->share.want),
			 head->share.credit) == FIT_HOST_CAP) {
			v = victim(s, head->phost);
			/* The first one the pool is short for, behind it. */
			while (!v && (w = w->share.next) &&
			       fits(w, tgt_buf_chunk_size(w->share.want),
				    w->share.credit) == FIT_HOST_CAP)
				;
		}
		if (!v && w)
			v = victim(s, NULL);
		if (v)
			evict(s, v);
	}
	relief_arm(s);
}

static void relief_arm(struct tgt_share *s)
{
	struct io_uring_sqe *sqe;

	if (s->relief_armed)
		return;
	s->relief_ts.tv_sec = 0;
	s->relief_ts.tv_nsec = TGT_SHARE_RELIEF_MS * 1000000ll;
	sqe = tgt_reactor_sqe(s->r);
	io_uring_prep_timeout(sqe, &s->relief_ts, 0, 0);
	tgt_sqe_set_event(sqe, &s->relief_ev);
	s->relief_armed = true;
}

void tgt_share_conn_init(struct tgt_conn *c,
			 void (*evict)(struct tgt_conn *c, const char *why))
{
	memset(&c->share, 0, sizeof(c->share));
	c->share.ev.done = resume_done;
	c->share.evict = evict;
}
