// SPDX-License-Identifier: MIT
/*
 * TCP transport, target side: answers out.  Answers queue per connection
 * in order; one SENDMSG at a time carries as many as fit (one in flight
 * keeps the byte stream ordered across partial sends).
 *
 * Zero copy: a send that carries at least TCP_ZC_MIN bytes goes out as
 * SENDMSG_ZC (tcp_zero_copy = on|auto), so the kernel hands the I/O
 * buffers' pages to the device instead of copying them into socket
 * buffers (the copy was about 40 % of a 128 KiB READ's CPU on the
 * target).  The kernel reads those pages until the peer has acked them,
 * well after the send's own completion, and says so with a second,
 * "notification" completion.  So:
 *
 *  - the request slot is released at the send's completion as before (the
 *    client may reuse the tag as soon as it has the answer, which can be
 *    before the notification), but its data chunk is kept with the send's
 *    record (struct tcp_zc) and goes back to the pool at the notification;
 *  - the 24-byte RSP headers are sent from a copy in that record, since a
 *    slot's header is rewritten by its next answer;
 *  - records are released in send order, so an answer sent partly by one
 *    zero-copy send and finished by a later one is kept until both are
 *    done (it is kept with the later, whose release waits for the earlier);
 *  - control PDUs never go zero copy (a send stops before one).
 *
 * Every answer kept with a record was named by that record's own send
 * (a partly sent answer is at the head of the queue when the next send is
 * built), so a record keeps at most TCP_IOV_MAX chunks.
 *
 * Where the kernel copies anyway (loopback, a device without
 * scatter-gather), zero copy only adds the notification: with
 * tcp_zero_copy = auto a connection stops asking once the kernel reports
 * a copy (IORING_SEND_ZC_REPORT_USAGE, Linux 6.2).  Off by default: on
 * the benchmark's virtio link it cost more than the copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bufshare.h"
#include "export.h"
#include "log.h"
#include "stats.h"
#include "tcp_int.h"

/* Below this a copy costs less than pinning pages and a notification. */
#define TCP_ZC_MIN	(16u << 10)

/* Linux 6.2 UAPI; liburing 2.3 (Debian 12) predates it. */
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE	(1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED	(1U << 31)
#endif

struct tcp_zc {
	struct tgt_event ev;
	struct tcp_conn *tc;		/* holds a reference */
	TAILQ_ENTRY(tcp_zc) link;	/* in tcp_conn.zc, send order */
	bool sent;			/* the send's own completion came */
	bool notified;			/* the kernel is done with the pages */
	unsigned nbuf, nhdr;
	struct { void *buf; uint32_t cap; } bufs[TCP_IOV_MAX];
	uint8_t hdr[TCP_IOV_MAX][sizeof(struct rblk_wire_rsp)];
};

static void flush_tx(struct tcp_conn *tc);

static void zc_account(struct tcp_conn *tc, enum tgt_zc_counter i, uint64_t n)
{
	tgt_stats_account_zc(&tc->c.stats, i, n);
	if (tc->c.sess)
		tgt_session_account_zc(tc->c.sess, i, n);
}

static void tx_release(struct tcp_conn *tc, struct tcp_tx *tx, int err)
{
	if (!tx->req) {
		tc->ctrl_bytes -= tx->total;
		free(tx);
	} else if (tx->zc && !TAILQ_EMPTY(&tc->zc)) {
		/* The kernel may still read its pages: kept to the newest
		 * zero-copy send, released after every earlier one. */
		struct tcp_zc *zs = TAILQ_LAST(&tc->zc, tcp_zc_list);

		tgt_req_sent_keep(tx->req, err, &zs->bufs[zs->nbuf].buf,
				  &zs->bufs[zs->nbuf].cap);
		zs->nbuf++;
	} else {
		tgt_req_sent(tx->req, err);
	}
}

/* A send's own completion: res bytes of the queue went out (or failed). */
static void sent(struct tcp_conn *tc, int res)
{
	bool was_limited = tc->ctrl_bytes > TCP_CTRL_LIMIT;
	struct tcp_tx_list done = STAILQ_HEAD_INITIALIZER(done);
	struct tcp_tx *tx;
	size_t left;

	tc->send_inflight = NULL;
	/* Hold the connection: releasing requests drops references. */
	if (res == -EINTR || res == -EAGAIN) {
		flush_tx(tc);
		tgt_conn_put(&tc->c);
		return;
	}
	if (res <= 0) {
		if (!tc->wr_dead)
			RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: send: %s",
				 tgt_reactor_id(tc->c.r), tc->c.peer,
				 strerror(res ? -res : EPIPE));
		tc->wr_dead = true;
		while ((tx = STAILQ_FIRST(&tc->tx))) {
			STAILQ_REMOVE_HEAD(&tc->tx, link);
			tx_release(tc, tx, res ? res : -EPIPE);
		}
		tgt_conn_close(&tc->c, true, NULL);
		tgt_conn_put(&tc->c);
		return;
	}
	left = res;
	while (left && (tx = STAILQ_FIRST(&tc->tx))) {
		size_t n = tx->total - tx->sent;

		if (n > left) {
			tx->sent += left;	/* partial: resume mid-PDU */
			break;
		}
		left -= n;
		STAILQ_REMOVE_HEAD(&tc->tx, link);
		/* Released once the queue is consistent: a release may
		 * queue more (conn.c's closing status). */
		STAILQ_INSERT_TAIL(&done, tx, link);
	}
	while ((tx = STAILQ_FIRST(&done))) {
		STAILQ_REMOVE_HEAD(&done, link);
		tx_release(tc, tx, 0);
	}
	flush_tx(tc);
	if (was_limited && tc->ctrl_bytes <= TCP_CTRL_LIMIT)
		tcp_kick(tc);
	tcp_drain_check(tc);
	tcp_maybe_fin(tc);
	tgt_conn_put(&tc->c);
}

static void send_done(struct tgt_event *ev, int res, uint32_t flags)
{
	sent(TC_OF_EV(ev, send_ev), res);
}

/* Zero-copy sends the kernel is done with, in send order: their chunks
 * go back to the pool. */
static void zc_reap(struct tcp_conn *tc)
{
	struct tcp_zc *zs;

	tgt_conn_get(&tc->c);
	while ((zs = TAILQ_FIRST(&tc->zc)) && zs->sent && zs->notified) {
		TAILQ_REMOVE(&tc->zc, zs, link);
		for (unsigned i = 0; i < zs->nbuf; i++)
			tgt_share_put(&tc->c, zs->bufs[i].buf, zs->bufs[i].cap);
		free(zs);
		tgt_conn_put(&tc->c);
	}
	tgt_conn_put(&tc->c);
}

static void zc_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tcp_zc *zs = (struct tcp_zc *)ev;
	struct tcp_conn *tc = zs->tc;

	if (flags & IORING_CQE_F_NOTIF) {
		if (tc->zc_report && (res & IORING_NOTIF_USAGE_ZC_COPIED)) {
			zc_account(tc, TGT_ZC_COPIED, 1);
			if (tc->zc_mode == TGT_TCP_ZC_AUTO) {
				tc->zc_mode = TGT_TCP_ZC_OFF;
				RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: the kernel copies zero-copy sends: copying",
					 tgt_reactor_id(tc->c.r), tc->c.peer);
			}
		}
		zs->notified = true;
		zc_reap(tc);
		return;
	}
	zs->sent = true;
	/* Without F_MORE no notification follows: nothing was pinned. */
	if (!(flags & IORING_CQE_F_MORE))
		zs->notified = true;
	if (res > 0) {
		zc_account(tc, TGT_ZC_SENDS, 1);
		zc_account(tc, TGT_ZC_BYTES, (uint64_t)res);
	} else if ((res == -EOPNOTSUPP || res == -EINVAL) &&
		   !(flags & IORING_CQE_F_MORE)) {
		/* This socket cannot (a route, a kernel quirk): copy. */
		RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: zero-copy send: %s: copying",
			 tgt_reactor_id(tc->c.r), tc->c.peer, strerror(-res));
		tc->zc_mode = TGT_TCP_ZC_OFF;
		res = -EAGAIN;		/* sent() sends it again */
	}
	sent(tc, res);
	zc_reap(tc);
}

/* Whether the answers at the head of the queue carry enough bytes (before
 * any control PDU) for a zero-copy send to pay. */
static bool zc_worth(const struct tcp_conn *tc)
{
	size_t bytes = 0;
	unsigned n = 0;

	if (tc->zc_mode == TGT_TCP_ZC_OFF || tc->fd < 0)
		return false;
	for (const struct tcp_tx *tx = STAILQ_FIRST(&tc->tx); tx && tx->req &&
	     n < TCP_IOV_MAX; n += tx->niov, tx = STAILQ_NEXT(tx, link))
		bytes += tx->total - tx->sent;
	return bytes >= TCP_ZC_MIN;
}

/* A record for the next send, queued last (NULL: out of memory, copy). */
static struct tcp_zc *zc_new(struct tcp_conn *tc)
{
	struct tcp_zc *zs = malloc(sizeof(*zs));

	if (!zs)
		return NULL;
	zs->ev.done = zc_done;
	zs->tc = tc;
	zs->sent = zs->notified = false;
	zs->nbuf = zs->nhdr = 0;
	TAILQ_INSERT_TAIL(&tc->zc, zs, link);
	tgt_conn_get(&tc->c);
	return zs;
}

static void flush_tx(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;
	struct tcp_zc *zs = NULL;
	unsigned n = 0;

	if (tc->send_inflight || STAILQ_EMPTY(&tc->tx))
		return;
	tgt_conn_get(&tc->c);
	tc->send_inflight = &tc->send_ev;
	if (tc->wr_dead) {
		tgt_reactor_defer(tc->c.r, &tc->send_ev, -EPIPE);
		return;
	}
	if (zc_worth(tc))
		zs = zc_new(tc);
	for (struct tcp_tx *tx = STAILQ_FIRST(&tc->tx); tx && n < TCP_IOV_MAX;
	     tx = STAILQ_NEXT(tx, link)) {
		size_t skip = tx->sent;

		if (zs && !tx->req)
			break;
		for (unsigned i = 0; i < tx->niov && n < TCP_IOV_MAX; i++) {
			uint8_t *base = tx->iov[i].iov_base;
			size_t len = tx->iov[i].iov_len;

			if (skip >= len) {
				skip -= len;
				continue;
			}
			if (zs && i == 0) {
				/* The RSP: sent from a copy that lives as
				 * long as the kernel may read it. */
				memcpy(zs->hdr[zs->nhdr], base, len);
				base = zs->hdr[zs->nhdr++];
			}
			if (zs)
				tx->zc = true;
			tc->iov[n].iov_base = base + skip;
			tc->iov[n].iov_len = len - skip;
			skip = 0;
			n++;
		}
	}
	memset(&tc->msg, 0, sizeof(tc->msg));
	tc->msg.msg_iov = tc->iov;
	tc->msg.msg_iovlen = n;
	sqe = tgt_reactor_sqe(tc->c.r);
	if (zs) {
		io_uring_prep_sendmsg_zc(sqe, tc->fd, &tc->msg, MSG_NOSIGNAL);
		if (tc->zc_report)
			sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
		tgt_sqe_set_event(sqe, &zs->ev);
		tc->send_inflight = &zs->ev;
	} else {
		io_uring_prep_sendmsg(sqe, tc->fd, &tc->msg, MSG_NOSIGNAL);
		tgt_sqe_set_event(sqe, &tc->send_ev);
	}
}

static void queue_tx(struct tcp_conn *tc, struct tcp_tx *tx)
{
	tx->sent = 0;
	tx->zc = false;
	STAILQ_INSERT_TAIL(&tc->tx, tx, link);
	flush_tx(tc);
}

void tcp_send_rsp(struct tgt_req *req)
{
	struct tcp_tx *tx = (struct tcp_tx *)&req->tp;

	_Static_assert(sizeof(req->rsp) <= sizeof(((struct tcp_zc *)0)->hdr[0]),
		       "a zero-copy send's header copy holds an RSP");
	tx->req = req;
	tx->iov[0].iov_base = req->rsp;
	tx->iov[0].iov_len = req->rsp_len;
	tx->niov = 1;
	if (req->data_len) {
		tx->iov[1].iov_base = req->buf;
		tx->iov[1].iov_len = req->data_len;
		tx->niov = 2;
	}
	tx->total = req->rsp_len + req->data_len;
	queue_tx(tc_of(req->conn), tx);
}

int tcp_send_pdu(struct tgt_conn *c, const void *pdu, size_t len)
{
	struct tcp_conn *tc = tc_of(c);
	struct tcp_tx *tx = malloc(sizeof(*tx) + len);

	if (!tx)
		return -ENOMEM;
	memcpy(tx->data, pdu, len);
	tx->req = NULL;
	tx->iov[0].iov_base = tx->data;
	tx->iov[0].iov_len = len;
	tx->niov = 1;
	tx->total = len;
	tc->ctrl_bytes += len;
	queue_tx(tc, tx);
	return 0;
}

void tcp_send_abort(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;

	if (tc->send_inflight) {
		sqe = tgt_reactor_sqe(tc->c.r);
		io_uring_prep_cancel(sqe, tc->send_inflight, 0);
		tgt_sqe_set_event(sqe, NULL);
	}
	if (!TAILQ_EMPTY(&tc->zc) && tc->fd >= 0) {
		/* A reset frees the socket's queue, and the pages with it. */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(tc->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(tc->fd);
		tc->fd = -1;
	}
}

void tcp_send_init(struct tcp_conn *tc, enum tgt_tcp_zc mode, bool report)
{
	tc->send_ev.done = send_done;
	STAILQ_INIT(&tc->tx);
	TAILQ_INIT(&tc->zc);
	tc->zc_mode = mode;
	tc->zc_report = report;
}

/* One SENDMSG_ZC of a byte on an AF_UNIX socket: the flags are checked
 * first (-EINVAL: opcode or flag unknown), then the socket (-EOPNOTSUPP:
 * AF_UNIX has no zero copy), so the answer tells what the kernel knows. */
static int probe_send(struct io_uring *ring, int fd, unsigned zc_flags)
{
	static const char byte;
	struct iovec iov = { .iov_base = (void *)&byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	bool more;
	int res;

	io_uring_prep_sendmsg_zc(sqe, fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	sqe->ioprio |= zc_flags;
	res = io_uring_submit_and_wait(ring, 1);
	if (res < 0)
		return res;
	if (io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	more = cqe->flags & IORING_CQE_F_MORE;
	io_uring_cqe_seen(ring, cqe);
	if (more && !io_uring_wait_cqe(ring, &cqe))
		io_uring_cqe_seen(ring, cqe);	/* the notification */
	return res;
}

bool tcp_zc_probe(bool *report)
{
	struct io_uring ring;
	int sv[2], res;

	*report = false;
	if (io_uring_queue_init(4, &ring, 0))
		return false;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		io_uring_queue_exit(&ring);
		return false;
	}
	res = probe_send(&ring, sv[0], IORING_SEND_ZC_REPORT_USAGE);
	if (res == -EINVAL)
		res = probe_send(&ring, sv[0], 0);
	else
		*report = res == -EOPNOTSUPP || res >= 0;
	close(sv[0]);
	close(sv[1]);
	io_uring_queue_exit(&ring);
	return res == -EOPNOTSUPP || res >= 0;
}
