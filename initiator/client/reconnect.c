// SPDX-License-Identifier: MIT
/*
 * The client queue's fault handling: the state machine
 *
 *	LIVE --(reset, EOF, keep-alive or I/O timeout, SHUTTING_DOWN)--> CONNECTING
 *	CONNECTING --(connect + LOGIN + start)--> LIVE, held commands resent in order
 *	CONNECTING --(ctrl_loss_tmo; a final LOGIN refusal)--> FAILED
 *	LIVE --(a malformed response)--> FAILED
 *	any --(the caller stops: opts.stop)--> FAILED
 *
 * With several paths (paths.c) a lost connection moves the queue to the
 * next path at once, and failed attempts go round the paths, at once
 * within a round and every reconnect_delay between rounds: a failover
 * costs the time to notice the loss and one connect.
 *
 * and the queue's one clock: a timerfd, in the epoll fd rblk_queue_fd()
 * returns, armed for the next thing due -- a keep-alive to send or to give
 * up on, the earliest command deadline, a reconnect attempt, the
 * fast_io_fail and ctrl_loss deadlines.  Nothing runs on its own thread or
 * from a signal: the timers run inside rblk_queue_reap (rblk_rc_step),
 * which the caller calls when rblk_queue_fd() wakes it or with a timeout.
 *
 * Command deadlines are not re-armed per command: the timer always fires
 * at least every keep-alive half-period (or at the deadline of the first
 * command sent onto an idle timer), and each firing scans the sent tags.
 */
#include "clock.h"
#include "client_queue.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define DEF_KA_MS	5000
#define DEF_IO_MS	30000
#define DEF_DELAY_MS	2000
#define DEF_LOSS_MS	600000
#define DEF_CONNECT_MS	10000
/* After SHUTTING_DOWN (a planned restart): retry at once, then this often
 * for FAST_WINDOW_MS, then every reconnect_delay. */
#define FAST_RETRY_MS	250
#define FAST_WINDOW_MS	10000
/* A reconnect attempt never gets less than this, even right before a
 * fast_io_fail or ctrl_loss deadline. */
#define MIN_ATTEMPT_MS	250
/* A reconnect attempt gives up after max(2 x reconnect_delay, this), at
 * most the connect timeout: an attempt begun while the target was down
 * (an RDMA connect to a dead node waits for its full timeout) must not
 * make a target that is back wait for it.  The first connection of a
 * queue keeps the whole connect timeout. */
#define ATTEMPT_FLOOR_MS	3000

#define NEVER		INT64_MAX

const char *rblk_queue_state_str(enum rblk_queue_state s)
{
	switch (s) {
	case RBLK_QUEUE_LIVE:		return "live";
	case RBLK_QUEUE_CONNECTING:	return "connecting";
	case RBLK_QUEUE_FAILED:		return "failed";
	}
	return "?";
}

/* opts value -> ms: def for 0, -1 off/forever, 0 at once. */
static int resolve(int v, int def)
{
	if (v == 0)
		return def;
	if (v == RBLK_TMO_NOW)
		return 0;
	return v < 0 ? -1 : v;
}

int rblk_rc_init(struct rblk_queue *q)
{
	const struct rblk_client_opts *o = &q->opts;

	q->ka_ms = resolve(o->keep_alive_tmo_ms, DEF_KA_MS);
	q->io_ms = resolve(o->io_timeout_ms, DEF_IO_MS);
	q->delay_ms = resolve(o->reconnect_delay_ms, DEF_DELAY_MS);
	q->loss_ms = resolve(o->ctrl_loss_tmo_ms, DEF_LOSS_MS);
	/* fast_io_fail is off unless asked for. */
	q->fail_ms = o->fast_io_fail_tmo_ms == 0 ? -1 : resolve(o->fast_io_fail_tmo_ms, -1);
	/* "No keep-alive" and a zero period are the same thing. */
	if (q->ka_ms == 0)
		q->ka_ms = -1;
	if (q->io_ms == 0)
		q->io_ms = -1;
	if (q->delay_ms <= 0)
		q->delay_ms = DEF_DELAY_MS;
	q->timer_at = NEVER;
	q->conn_fd = -1;
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (q->tfd < 0)
		return -errno;
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return -errno;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->tfd,
		      &(struct epoll_event) { .events = EPOLLIN }))
		return -errno;
	return 0;
}

void rblk_rc_destroy(struct rblk_queue *q)
{
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->tfd >= 0)
		close(q->tfd);
	q->epfd = q->tfd = -1;
}

static void arm(struct rblk_queue *q, int64_t at)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (at == q->timer_at)
		return;
	q->timer_at = at;
	if (at != NEVER) {
		if (at < 1)
			at = 1;	/* 0 would disarm */
		its.it_value.tv_sec = at / 1000;
		its.it_value.tv_nsec = (at % 1000) * 1000000;
	}
	/* rblk_now_ms is CLOCK_MONOTONIC, like the timer. */
	if (timerfd_settime(q->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		rblk_err("queue %u: timerfd_settime: %s", q->opts.queue_id,
			 strerror(errno));
}

static void set_state(struct rblk_queue *q, enum rblk_queue_state s)
{
	q->state = s;
	q->since = rblk_now_ms();
}

void rblk_rc_close_conn(struct rblk_queue *q)
{
	if (!q->conn)
		return;
	if (q->conn_fd >= 0)
		epoll_ctl(q->epfd, EPOLL_CTL_DEL, q->conn_fd, NULL);
	q->conn_fd = -1;
	/* TCP: shutdown + close.  RDMA: QP to error, flushed WRs reaped,
	 * then QP, CQs, MRs: nothing of the caller's is touched after this,
	 * so held commands may be failed or resent from their buffers. */
	q->ops->close(q->conn);
	q->conn = NULL;
}

void rblk_rc_live(struct rblk_queue *q)
{
	int64_t now = rblk_now_ms();

	/* A notice from the connection before this one means nothing now. */
	q->stop_seen = 0;
	q->conn_fd = q->ops->get_fd(q->conn);
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->conn_fd,
		      &(struct epoll_event) { .events = EPOLLIN }))
		rblk_err("queue %u: epoll_ctl: %s", q->opts.queue_id, strerror(errno));
	set_state(q, RBLK_QUEUE_LIVE);
	rblk_path_set(q, q->cur, RBLK_PATH_LIVE, NULL);
	q->tried = 0;
	q->last_rx = now;
	q->ka_out = 0;
	q->draining = 0;
	q->io_failing = 0;
	q->attempt = 0;
	if (q->spin && q->ops->set_spin)
		q->ops->set_spin(q->conn, 1);
	arm(q, q->ka_ms > 0 ? now + q->ka_ms / 3 : NEVER);
}

/* A tag is about to be sent: its deadline. */
static void note_sent(struct rblk_queue *q, uint32_t tag)
{
	int64_t dl;

	if (q->io_ms < 0)
		return;
	dl = rblk_now_ms() + q->io_ms;
	q->deadline[tag] = dl;
	/* An armed timer fires before this deadline, or at the latest at an
	 * earlier command's, and rescans then. */
	if (q->timer_at == NEVER)
		arm(q, dl);
}

/* Attempts left in a ctrl_loss_tmo period, for the log line (the
 * schedule is known; failed attempts take time too, so it is an upper
 * bound).  Each round tries every usable path, the next one at once. */
static void fmt_max(const struct rblk_queue *q, char *buf, size_t len)
{
	unsigned usable;
	long n;
	int fast_ms;

	if (q->loss_ms < 0) {
		snprintf(buf, len, "unlimited");
		return;
	}
	fast_ms = q->fast_until ? FAST_WINDOW_MS : 0;
	if (fast_ms > q->loss_ms)
		fast_ms = q->loss_ms;
	n = 1 + fast_ms / FAST_RETRY_MS + (q->loss_ms - fast_ms) / q->delay_ms;
	usable = rblk_paths_usable(q);
	n *= usable ? usable : 1;
	snprintf(buf, len, "%ld", n);
}

static void log_next(struct rblk_queue *q, const char *what, int64_t now)
{
	char max[24];

	fmt_max(q, max, sizeof(max));
	rblk_warn("queue %u: %s (%s); reconnect attempt %u of %s in %.2fs",
		  q->opts.queue_id, what, q->why, q->attempt + 1, max,
		  (double)(q->next_attempt - now) / 1000.0);
}

void rblk_rc_fail(struct rblk_queue *q, int err, const char *why)
{
	unsigned n = q->nsent + q->nheld;

	if (q->state == RBLK_QUEUE_FAILED)
		return;
	rblk_rc_close_conn(q);
	set_state(q, RBLK_QUEUE_FAILED);
	q->err = err ? err : -EIO;
	q->last_err = q->err;
	snprintf(q->why, sizeof(q->why), "%.159s", why);
	arm(q, NEVER);
	rblk_client_fail_tags(q, TAG_SENT, RBLK_S_IO_ERROR);
	rblk_client_fail_tags(q, TAG_HELD, RBLK_S_IO_ERROR);
	rblk_err("queue %u to %s target failed: %s; failing %u outstanding I/O",
		 q->opts.queue_id, q->ops->name, why, n);
}

/* fast_io_fail_tmo: what waits fails now, and what comes fails at once,
 * until a reconnect works. */
static void fail_io(struct rblk_queue *q)
{
	rblk_warn("queue %u: fast_io_fail_tmo (%d ms) passed: failing %u held commands and new I/O until reconnected",
		  q->opts.queue_id, q->fail_ms, q->nheld);
	q->io_failing = 1;
	rblk_client_fail_tags(q, TAG_HELD, RBLK_S_IO_ERROR);
}

/* Describes path idx for log lines. */
static const char *path_name(const struct rblk_queue *q, unsigned idx, char *buf,
			     size_t len)
{
	const struct rblk_qpath *p = &q->paths[idx];

	snprintf(buf, len, "path %u (%s %s%s%s)", idx + 1, p->transport, p->host,
		 p->port ? ":" : "", p->port ? p->port : "");
	return buf;
}

/*
 * The connection on the current path is gone: the next connection goes
 * to the path asked for (rblk_queue_prefer_path: a planned move), or,
 * when the loss was not planned, to the next path.
 */
static void switch_path(struct rblk_queue *q, bool planned, const char *why)
{
	unsigned from = q->cur;
	const char *what = q->want_path >= 0 && planned ? "moving" : "failover";
	char a[160], b[160];

	if (q->want_path >= 0 && planned) {
		q->cur = (unsigned)q->want_path;
		q->want_path = -1;
		rblk_path_set(q, from, RBLK_PATH_UNTRIED, NULL);
	} else {
		rblk_path_set(q, from, RBLK_PATH_FAILED, why);
		if (q->npaths < 2 || !rblk_paths_next(q))
			return;
	}
	q->tried = 0;
	rblk_warn("queue %u: %s from %s to %s", q->opts.queue_id,
		  what, path_name(q, from, a, sizeof(a)),
		  path_name(q, q->cur, b, sizeof(b)));
}

void rblk_rc_lost(struct rblk_queue *q, int err, const char *why)
{
	int64_t now = rblk_now_ms();
	int planned = q->draining;

	if (q->state != RBLK_QUEUE_LIVE)
		return;
	snprintf(q->why, sizeof(q->why), "%.150s", why);
	q->last_err = err;
	if (q->loss_ms == 0) {
		/* ctrl_loss_tmo 0: no reconnecting at all. */
		rblk_rc_fail(q, err, why);
		return;
	}
	rblk_rc_close_conn(q);
	switch_path(q, planned, why);
	/* Everything that was at the target goes again. */
	for (unsigned t = 0; t < q->depth; t++) {
		if (q->tstate[t] == TAG_SENT) {
			q->tstate[t] = TAG_HELD;
			q->nheld++;
		}
	}
	q->nsent = 0;
	q->ka_out = 0;
	q->draining = 0;
	q->attempt = 0;
	set_state(q, RBLK_QUEUE_CONNECTING);
	q->fast_until = planned ? now + FAST_WINDOW_MS : 0;
	/* The first attempt is at once: a connection that died on its own
	 * (idle timeout, a reset path) may come straight back. */
	q->next_attempt = now;
	log_next(q, "connection lost", now);
	if (q->fail_ms == 0)
		fail_io(q);
	arm(q, now);
}

/* The core saw SHUTTING_DOWN (q->stop_seen) in a response or a
 * keep-alive: hold new commands, and reconnect on the fast schedule once
 * nothing is left at the target. */
static void take_stop_notice(struct rblk_queue *q)
{
	if (q->want_path >= 0 && q->state == RBLK_QUEUE_LIVE && !q->draining) {
		/* A move to another path (failback): drain, as for a
		 * stopping target, then connect there. */
		q->draining = 1;
		rblk_info("queue %u: moving to path %d: holding new commands, %u still at the target",
			  q->opts.queue_id, q->want_path + 1, q->nsent);
	}
	if (!q->stop_seen)
		return;
	q->stop_seen = 0;
	if (q->state != RBLK_QUEUE_LIVE || q->draining)
		return;
	q->draining = 1;
	rblk_info("queue %u: target is shutting down: holding new commands, %u still at the target",
		  q->opts.queue_id, q->nsent);
	/* rblk_rc_step reconnects once nothing is left at the target. */
}

/* ---- LIVE --------------------------------------------------------------- */

static int send_keepalive(struct rblk_queue *q, int64_t now)
{
	uint8_t pdu[sizeof(struct rblk_wire_keepalive)];
	size_t n = rblk_encode_keepalive(pdu, RBLK_PDU_KEEPALIVE, 0, ++q->ka_seq, 0);

	q->ka_out = 1;
	q->ka_sent = now;
	return q->ops->keepalive(q->conn, q, pdu, n);
}

static void live_timers(struct rblk_queue *q, int64_t now)
{
	int64_t next = NEVER;
	char why[160];
	int ret;

	/*
	 * The keep-alive rule (docs/protocol.md): a KEEPALIVE after a third
	 * of keep_alive_tmo without any PDU from the target, and the
	 * connection is dead keep_alive_tmo after the last PDU if that
	 * KEEPALIVE is still unanswered.  Counting from the last PDU, not
	 * from the KEEPALIVE, is what bounds a failover by keep_alive_tmo.
	 */
	if (q->ka_ms > 0 && !q->draining) {
		/* Anything that came after the keep-alive shows the target
		 * alive: its answer is no longer awaited. */
		if (q->ka_out && q->last_rx >= q->ka_sent)
			q->ka_out = 0;
		if (q->ka_out && now >= q->last_rx + q->ka_ms) {
			snprintf(why, sizeof(why),
				 "nothing from the target for keep_alive_tmo %d ms, a keep-alive unanswered",
				 q->ka_ms);
			rblk_rc_lost(q, -ETIMEDOUT, why);
			return;
		}
		if (!q->ka_out && now >= q->last_rx + q->ka_ms / 3) {
			ret = send_keepalive(q, now);
			if (ret) {
				snprintf(why, sizeof(why), "sending keep-alive: %s",
					 strerror(-ret));
				rblk_rc_lost(q, ret, why);
				return;
			}
		}
		next = q->last_rx + (q->ka_out ? q->ka_ms : q->ka_ms / 3);
	}
	if (q->io_ms >= 0 && q->nsent) {
		int64_t first = NEVER;
		uint32_t ft = 0;

		for (uint32_t t = 0; t < q->depth; t++) {
			if (q->tstate[t] == TAG_SENT && q->deadline[t] < first) {
				first = q->deadline[t];
				ft = t;
			}
		}
		if (first <= now) {
			snprintf(why, sizeof(why), "%s on tag %u unanswered after io_timeout %d ms",
				 rblk_opcode_str(q->slot[ft]->opcode), ft, q->io_ms);
			rblk_rc_lost(q, -ETIMEDOUT, why);
			return;
		}
		if (first < next)
			next = first;
	}
	arm(q, next);
}

/* ---- CONNECTING --------------------------------------------------------- */

/* Sends held commands in the order they were submitted. */
static void reissue(struct rblk_queue *q)
{
	while (q->nheld && q->state == RBLK_QUEUE_LIVE) {
		uint32_t tag = UINT32_MAX;

		for (uint32_t t = 0; t < q->depth; t++)
			if (q->tstate[t] == TAG_HELD &&
			    (tag == UINT32_MAX || q->seq[t] < q->seq[tag]))
				tag = t;
		if (rblk_rc_send(q, tag) == -EINVAL)
			rblk_client_finish(q, tag, RBLK_S_INVALID_FIELD);
	}
	rblk_rc_flush(q);
}

/*
 * Whether a failed reconnect ends the queue: the target answered LOGIN
 * with a verdict about the volume or this host, which trying again will
 * not change -- the kernel's NVMe host stops reconnecting on a connect
 * refused with DNR (no such subsystem, host not allowed) or on rejected
 * authentication, and so do we.  A stopping caller ends it too.  Fails
 * the queue and returns true then.
 */
static bool final_refusal(struct rblk_queue *q, int ret, const char *err)
{
	char why[256];

	if (ret == -ECANCELED) {
		rblk_rc_fail(q, ret, "stopped by the caller while reconnecting");
		return true;
	}
	if (ret == -EMEDIUMTYPE && !rblk_paths_usable(q)) {
		rblk_rc_fail(q, ret, err);
		return true;
	}
	/* With other paths, one target's verdict is that path's only. */
	if (q->npaths > 1)
		return false;
	switch (q->refused) {
	case RBLK_S_NO_SUCH_VOLUME:
	case RBLK_S_ACCESS_DENIED:
	case RBLK_S_AUTH_FAILED:
	case RBLK_S_AUTH_REQUIRED:
		snprintf(why, sizeof(why), "%.180s (final: the volume was deleted or this host's access revoked; not retried)",
			 err);
		rblk_rc_fail(q, ret, why);
		return true;
	}
	return false;
}

static void attempt(struct rblk_queue *q, int64_t now)
{
	int budget = q->opts.timeout_ms > 0 ? q->opts.timeout_ms : DEF_CONNECT_MS;
	int short_budget = 2 * q->delay_ms > ATTEMPT_FLOOR_MS ? 2 * q->delay_ms : ATTEMPT_FLOOR_MS;
	int64_t lost_at = q->since;
	unsigned attempt_no;
	int64_t limit = NEVER;
	char err[256];
	int ret;

	/* An attempt must not sleep through a deadline the caller waits on. */
	if (q->loss_ms > 0)
		limit = lost_at + q->loss_ms;
	if (q->fail_ms > 0 && !q->io_failing && lost_at + q->fail_ms < limit)
		limit = lost_at + q->fail_ms;
	if (short_budget < budget)
		budget = short_budget;
	if (limit != NEVER && limit - now < budget)
		budget = limit - now < MIN_ATTEMPT_MS ? MIN_ATTEMPT_MS : (int)(limit - now);
	attempt_no = ++q->attempt;
	rblk_path_set(q, q->cur, RBLK_PATH_CONNECTING, NULL);
	ret = rblk_client_connect(q, budget, err, sizeof(err));
	now = rblk_now_ms();
	if (ret)
		rblk_path_set(q, q->cur, RBLK_PATH_FAILED, err);
	if (ret && final_refusal(q, ret, err))
		return;
	if (!ret) {
		unsigned held = q->nheld;

		q->reconnects++;
		rblk_rc_live(q);
		rblk_warn("queue %u: reconnected after %.2fs (attempt %u); resending %u commands",
			  q->opts.queue_id, (double)(now - lost_at) / 1000.0,
			  attempt_no, held);
		/* set_state restarted the clock: state_ms counts from now. */
		reissue(q);
		return;
	}
	q->last_err = ret;
	/* Refused (nothing listens, the node is up) in the first seconds
	 * after the loss: a restart in progress, even when the loss reached
	 * us as a reset before the target's SHUTTING_DOWN notice did.  A
	 * refused connect costs nothing, so retry on the fast schedule. */
	if (ret == -ECONNREFUSED && !q->fast_until && now < lost_at + FAST_WINDOW_MS)
		q->fast_until = lost_at + FAST_WINDOW_MS;
	q->next_attempt = now + (now < q->fast_until ? FAST_RETRY_MS : q->delay_ms);
	/* Other paths: the next one at once, until a round is done. */
	if (q->npaths > 1 && rblk_paths_next(q) && ++q->tried < q->npaths)
		q->next_attempt = now;
	else
		q->tried = 0;
	snprintf(q->why, sizeof(q->why), "%.150s", err);
	log_next(q, "reconnect failed", now);
}

static void connecting_timers(struct rblk_queue *q, int64_t now)
{
	int64_t lost_at = q->since, next;

	if (q->loss_ms > 0 && now >= lost_at + q->loss_ms) {
		char why[256];

		snprintf(why, sizeof(why), "not reconnected within ctrl_loss_tmo %d ms (%.150s)",
			 q->loss_ms, q->why);
		rblk_rc_fail(q, q->last_err ? q->last_err : -ETIMEDOUT, why);
		return;
	}
	if (q->fail_ms > 0 && !q->io_failing && now >= lost_at + q->fail_ms)
		fail_io(q);
	if (now >= q->next_attempt) {
		attempt(q, now);
		if (q->state != RBLK_QUEUE_CONNECTING)
			return;
		/* The attempt may have taken a while: deadlines first. */
		now = rblk_now_ms();
		if (q->loss_ms > 0 && now >= lost_at + q->loss_ms) {
			connecting_timers(q, now);
			return;
		}
	}
	next = q->next_attempt;
	if (q->loss_ms > 0 && lost_at + q->loss_ms < next)
		next = lost_at + q->loss_ms;
	if (q->fail_ms > 0 && !q->io_failing && lost_at + q->fail_ms < next)
		next = lost_at + q->fail_ms;
	arm(q, next);
}

/* ---- the step ------------------------------------------------------------ */

static void run_timers(struct rblk_queue *q)
{
	uint64_t ticks;
	int64_t now = rblk_now_ms();

	if (now < q->timer_at)
		return;
	/* Clear the fd's readability; the expiry itself is q->timer_at. */
	if (read(q->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		rblk_err("queue %u: timerfd read: %s", q->opts.queue_id, strerror(errno));
	q->timer_at = NEVER;
	if (q->state == RBLK_QUEUE_LIVE)
		live_timers(q, now);
	else if (q->state == RBLK_QUEUE_CONNECTING)
		connecting_timers(q, now);
}

bool rblk_rc_can_send(struct rblk_queue *q)
{
	take_stop_notice(q);
	return q->state == RBLK_QUEUE_LIVE && !q->draining;
}

int rblk_rc_send(struct rblk_queue *q, uint32_t tag)
{
	char why[96];
	int ret;

	note_sent(q, tag);
	ret = rblk_client_send(q, tag);
	if (ret == -EINVAL)
		return ret;
	if (ret) {
		/* Part of the command may be on the wire: the stream is lost.
		 * The command is held and goes again on the next connection. */
		snprintf(why, sizeof(why), "sending a command: %s", strerror(-ret));
		rblk_rc_lost(q, ret, why);
	}
	return 0;
}

void rblk_rc_flush(struct rblk_queue *q)
{
	char why[96];
	int ret = rblk_client_flush(q);

	if (ret) {
		snprintf(why, sizeof(why), "sending commands: %s", strerror(-ret));
		rblk_rc_lost(q, ret, why);
	}
}

void rblk_rc_polled(struct rblk_queue *q, int ret)
{
	take_stop_notice(q);
	if (ret == -EPROTO) {
		/* A target that lies is not trusted again. */
		rblk_rc_fail(q, ret, "malformed response from the target");
		return;
	}
	if (ret == -ECANCELED) {
		rblk_rc_fail(q, ret, "stopped by the caller");
		return;
	}
	if (ret < 0) {
		char why[96];

		snprintf(why, sizeof(why), "%s", ret == -ECONNRESET ?
			 "connection closed by the target" : strerror(-ret));
		rblk_rc_lost(q, ret, why);
	} else if (q->draining && !q->nsent) {
		/* Everything the stopping target had is answered. */
		rblk_rc_lost(q, -ESHUTDOWN, q->want_path >= 0 ?
			     "moving to another path" : "target is shutting down");
	}
}

/*
 * A stopping caller (opts.stop) waits for nothing that cannot come at
 * once: a queue without a connection fails now; a live one waits for its
 * target while answers come, and fails once the target has sent nothing
 * for RBLK_STOP_GRACE_MS (stopped, hung, or behind a dead link the
 * keep-alive has not found yet).  A slow target that answers is waited
 * for, so a job that ends on time loses nothing.  True when failed.
 */
static bool stopped(struct rblk_queue *q, int64_t now)
{
	int64_t quiet;
	char why[128];

	if (!q->opts.stop || !q->opts.stop(q->opts.stop_arg))
		return false;
	if (!q->stop_at)
		q->stop_at = now;
	if (q->state == RBLK_QUEUE_CONNECTING) {
		rblk_rc_fail(q, -ECANCELED, "stopped by the caller while reconnecting");
		return true;
	}
	quiet = now - (q->last_rx > q->stop_at ? q->last_rx : q->stop_at);
	if ((q->nsent || q->nheld) && quiet >= RBLK_STOP_GRACE_MS) {
		snprintf(why, sizeof(why), "stopped by the caller; %u command(s) unanswered, nothing from the target for %d ms",
			 q->nsent + q->nheld, RBLK_STOP_GRACE_MS);
		rblk_rc_fail(q, -ECANCELED, why);
		return true;
	}
	return false;
}

void rblk_rc_step(struct rblk_queue *q, int wait_ms)
{
	int64_t now = rblk_now_ms();
	int tmo = wait_ms, ret;

	if (q->state == RBLK_QUEUE_FAILED || stopped(q, now))
		return;
	/* A stop flag wakes nothing: look again at least this often. */
	if (q->opts.stop && (tmo < 0 || tmo > RBLK_STOP_POLL_MS))
		tmo = RBLK_STOP_POLL_MS;
	if (q->timer_at != NEVER) {
		int64_t t = q->timer_at - now;

		if (t < 0)
			t = 0;
		if (tmo < 0 || t < tmo)
			tmo = (int)(t > INT32_MAX ? INT32_MAX : t);
	}
	if (q->state == RBLK_QUEUE_LIVE) {
		ret = q->ops->poll(q->conn, q, tmo);
		rblk_rc_polled(q, ret);
		if (ret == -EPROTO)
			return;
	} else if (tmo) {
		/* CONNECTING: nothing to read; sleep until the timer. */
		struct pollfd pfd = { .fd = q->tfd, .events = POLLIN };

		poll(&pfd, 1, tmo);
	}
	run_timers(q);
}

void rblk_queue_status(const struct rblk_queue *q, struct rblk_queue_status *st)
{
	*st = (struct rblk_queue_status) {
		.state = q->state,
		.state_ms = rblk_now_ms() - q->since,
		.reconnects = q->reconnects,
		.attempts = q->attempt,
		.io_failing = q->io_failing,
		.last_err = q->last_err,
		.reason = q->why,
		.size = q->info.size,
	};
}
