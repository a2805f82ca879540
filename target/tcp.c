// SPDX-License-Identifier: MIT
/*
 * TCP transport, target side.  The main thread accepts and hands each
 * socket to a reactor; from then on everything is io_uring on that reactor:
 * one RECV in flight per connection (into the connection's receive buffer,
 * or straight into a WRITE request's pool buffer once its capsule has been
 * validated); answers go out through tcp_send.c.
 *
 * A graceful close never closes the socket with input unread: the kernel
 * would answer that with a reset and throw away the answers still in the
 * socket.  It stops parsing, keeps reading and dropping what comes, sends
 * every answer, then a FIN, and waits (TCP_LINGER_S at most) for the
 * peer's own FIN before it closes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "helpers.h"
#include "hostport.h"
#include "log.h"
#include "server.h"
#include "tcp_int.h"
#include "transport.h"

#define TCP_RBUF_SIZE	(128u << 10)
#define TCP_MAX_CTRL_PDU 4096		/* LOGIN, DISCOVER: small fixed PDUs */
#define TCP_DATA_MIN	(64u << 10)	/* first chunk of a WRITE payload, at least */
#define TCP_LINGER_S	5		/* after our FIN, wait this long for the peer's */

struct tgt_listener {
	struct tgt_server *srv;
	int fd;
	char addr[128];
	enum tgt_tcp_zc zc_mode;	/* for its connections (tcp_send.c) */
	bool zc_report;
};

static void post_recv(struct tcp_conn *tc);
static void parse(struct tcp_conn *tc);
static void recv_done(struct tgt_event *ev, int res, uint32_t flags);
static void kick_done(struct tgt_event *ev, int res, uint32_t flags);
static void linger_done(struct tgt_event *ev, int res, uint32_t flags);
static void linger_cancel(struct tcp_conn *tc);

/* ---- listener (main thread) ----------------------------------------- */

/* What tcp_zero_copy = want comes to on this kernel (probed once). */
static enum tgt_tcp_zc zc_mode_for(enum tgt_tcp_zc want, bool *report)
{
	static int supported = -1;
	static bool can_report;

	*report = false;
	if (want == TGT_TCP_ZC_OFF)
		return TGT_TCP_ZC_OFF;		/* the default: nothing to probe */
	if (supported < 0) {
		supported = tcp_zc_probe(&can_report);
		if (!supported)
			rblk_info("tcp: this kernel has no zero-copy send: answers are copied");
		else if (!can_report)
			rblk_info("tcp: this kernel does not say when a zero-copy send copied: tcp_zero_copy = auto copies (on forces zero copy)");
	}
	*report = can_report;
	if (!supported || (want == TGT_TCP_ZC_AUTO && !can_report))
		return TGT_TCP_ZC_OFF;
	return want;
}

static int tcp_listen(struct tgt_server *srv, const char *addr,
		      struct tgt_listener **lp)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	struct tgt_listener *l;
	char host[256], port[12];
	unsigned p;
	int one = 1, ret;

	if (rblk_split_hostport(addr, host, sizeof(host), &p) || !p) {
		rblk_err("listen_tcp %s: not host:port", addr);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%u", p);
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		rblk_err("listen_tcp %s: %s", addr, gai_strerror(ret));
		return -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		ret = -ENOMEM;
		goto out_free_ai;
	}
	l->srv = srv;
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	l->fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		ret = -errno;
		goto out_free_l;
	}
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l->fd, res->ai_addr, res->ai_addrlen) < 0 ||
	    listen(l->fd, 128) < 0) {
		ret = -errno;
		goto out_close;
	}
	freeaddrinfo(res);
	l->zc_mode = zc_mode_for(srv->cfg.tcp_zero_copy, &l->zc_report);
	rblk_info("listening on tcp %s", addr);
	*lp = l;
	return 0;

out_close:
	close(l->fd);
out_free_l:
	free(l);
out_free_ai:
	freeaddrinfo(res);
	if (ret != -ENOMEM)
		rblk_err("listen_tcp %s: %s", addr, strerror(-ret));
	return ret;
}

static int tcp_listener_fd(struct tgt_listener *l)
{
	return l->fd;
}

static void tcp_unlisten(struct tgt_listener *l)
{
	close(l->fd);
	rblk_info("stopped listening on tcp %s", l->addr);
	free(l);
}

/* Fills ss with the socket's peer (AF_UNSPEC if unknown) and buf with
 * "addr:port" for logs. */
static void peer_name(int fd, struct sockaddr_storage *ss, char *buf,
		      size_t len)
{
	socklen_t sl = sizeof(*ss);
	char h[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	memset(ss, 0, sizeof(*ss));
	if (getpeername(fd, (struct sockaddr *)ss, &sl) < 0)
		ss->ss_family = AF_UNSPEC;
	if (ss->ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		port = ntohs(s4->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		port = ntohs(s6->sin6_port);
	}
	snprintf(buf, len, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 h, port);
}

/* Runs on the chosen reactor: the connection becomes that reactor's. */
static void adopt(struct tgt_reactor *r, struct tgt_work *w)
{
	struct tcp_conn *tc = (struct tcp_conn *)
		((char *)w - offsetof(struct tcp_conn, work));
	struct sockaddr_storage ss;
	char peer[80];

	peer_name(tc->fd, &ss, peer, sizeof(peer));
	tgt_conn_init(&tc->c, &tgt_transport_tcp, tgt_reactor_priv(r), r, peer,
		      (struct sockaddr *)&ss);
	RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: connected", tgt_reactor_id(r),
		 peer);
	if (tc->c.state != TGT_CONN_CLOSING)
		post_recv(tc);
}

/*
 * No Nagle (responses are latency bound); keepalive and a user timeout so
 * that a peer that vanished (power loss, cable) is noticed within about a
 * minute and its buffers and request slots come back.
 */
static void set_sockopts(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rblk_tcp_dead_peer_timers(fd, 30, 10, 3, 60000);
}

/* Resource errors go back to the main loop, which pauses this listener
 * (see transport.h): logging and returning 0 here spun at the fd limit. */
static int tcp_accept(struct tgt_listener *l)
{
	for (;;) {
		struct tgt_host *src;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct tcp_conn *tc;
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		int ret;

		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ECONNABORTED)
				return 0;
			return -errno;
		}
		/* Over the pre-login caps: closed at once (logged there). */
		ret = tgt_host_prelogin_get(l->srv->hosts, (struct sockaddr *)&ss,
					    "tcp", l->addr, &src);
		if (ret) {
			close(fd);
			if (ret == -EUSERS)
				continue;
			return ret;
		}
		set_sockopts(fd);
		tc = tgt_conn_alloc(sizeof(*tc));
		if (tc)
			tc->rbuf = malloc(TCP_RBUF_SIZE);
		if (!tc || !tc->rbuf) {
			/* This peer sees a close; the next ones wait. */
			tgt_host_prelogin_put(src);
			free(tc);
			close(fd);
			return -ENOMEM;
		}
		tc->c.prelogin = src;
		tc->fd = fd;
		tc->recv_ev.done = recv_done;
		tcp_send_init(tc, l->zc_mode, l->zc_report);
		tc->kick_ev.done = kick_done;
		tc->linger_ev.done = linger_done;
		tc->work.fn = adopt;
		tgt_reactor_post_work(tgt_server_pick_reactor(l->srv), &tc->work);
	}
}

/* ---- receive path ----------------------------------------------------- */

/* The peer is told why (tgt_conn_fatal), then the connection closes. */
static void framing_error(struct tcp_conn *tc, const char *what, int st,
			  uint8_t type)
{
	/* Any client can send garbage on as many connections as it likes:
	 * a few lines a second say what happens, the rest are counted. */
	static struct rblk_ratelimit rl = RBLK_RATELIMIT_INIT(1000, 10);

	rblk_warn_rl(&rl, "reactor%u: %s: framing error: %s (%s)",
		     tgt_reactor_id(tc->c.r), tc->c.peer, what,
		     rblk_status_str(st));
	tgt_conn_fatal(&tc->c, st, type, NULL);
}

/*
 * Room in the WRITE's chunk for need bytes of payload.  The chunk grows
 * with what has arrived: what is buffered plus what the socket holds
 * (SIOCINQ), at least doubling, so a client that streams its payload gets
 * the whole chunk at once and one that trickles holds about what it sent.
 * false: paused for memory (conn.c resumes us), or closing.
 */
static bool data_room(struct tcp_conn *tc, uint32_t need)
{
	struct tgt_req *req = tc->data_req;
	uint32_t want = need;
	int inq = 0;

	if (req->buf && req->buf_cap >= need)
		return true;
	if (tc->c.state == TGT_CONN_CLOSING && !tc->drain_reading)
		return false;	/* settle() drops it */
	/* All of it buffered already (every small WRITE): no syscall. */
	if (want < tc->data_need && ioctl(tc->fd, SIOCINQ, &inq) == 0 && inq > 0)
		want += (uint32_t)inq < tc->data_need ? (uint32_t)inq : tc->data_need;
	if (want < 2 * req->buf_cap)
		want = 2 * req->buf_cap;
	if (want < TCP_DATA_MIN)
		want = TCP_DATA_MIN;
	if (tgt_req_data_room(req, tc->data_got, need, want)) {
		tc->paused = true;
		return false;
	}
	return true;
}

/* Hands the finished WRITE payload to conn.c. */
static void data_finished(struct tcp_conn *tc, int err)
{
	struct tgt_req *req = tc->data_req;

	tc->data_req = NULL;
	tgt_req_data_done(req, err);
}

static void parse(struct tcp_conn *tc)
{
	if (tc->discarding && !tc->data_req) {
		tc->rhead = tc->rtail = 0;	/* nothing more is parsed */
		return;
	}
	while (!tc->paused) {
		uint8_t *p = tc->rbuf + tc->rhead;
		uint32_t avail = tc->rtail - tc->rhead, len, need;
		uint8_t type;
		int st, ret;

		if (tc->data_req) {
			uint32_t n = tc->data_need - tc->data_got;

			if (n > avail)
				n = avail;
			if (!n)
				return;	/* data_need > data_got: more to come */
			if (!data_room(tc, tc->data_got + n))
				return;
			memcpy((uint8_t *)tc->data_req->buf + tc->data_got, p, n);
			tc->data_got += n;
			tc->rhead += n;
			if (tc->data_got < tc->data_need)
				return;
			data_finished(tc, 0);
			continue;
		}
		if (tc->skip) {
			uint32_t n = tc->skip < avail ? tc->skip : avail;

			tc->rhead += n;
			tc->skip -= n;
			if (tc->skip)
				return;
			continue;
		}
		if (tc->c.state == TGT_CONN_CLOSING && !tc->c.draining)
			return;
		if (avail < sizeof(struct rblk_wire_hdr))
			return;
		/* Never trust the length before the header checks pass. */
		st = rblk_decode_hdr(p, avail, RBLK_MAX_PDU, &type, &len);
		if (st != RBLK_S_OK) {
			framing_error(tc, "bad PDU header", st, type);
			return;
		}
		if (type == RBLK_PDU_CMD) {
			need = sizeof(struct rblk_wire_cmd);
		} else {
			if (len > TCP_MAX_CTRL_PDU) {
				framing_error(tc, "control PDU too long",
					      RBLK_S_TOO_LARGE, type);
				return;
			}
			need = len;
		}
		if (avail < need)
			return;
		if (tc->ctrl_bytes > TCP_CTRL_LIMIT)
			return;	/* peer is not reading: wait for sends */
		ret = tgt_conn_pdu(&tc->c, p, need, len);
		if (ret == -EAGAIN) {
			tc->paused = true;
			return;
		}
		if (ret < 0) {
			/* conn.c logged the protocol error it found */
			if (ret != -ECONNABORTED)
				tgt_conn_close(&tc->c, true, ret == -EPROTO ? NULL :
					       "out of memory");
			return;
		}
		tc->rhead += need;
		if (tc->data_req)
			tc->data_got = 0;	/* fetch_data set data_need */
		else
			tc->skip = len - need;
	}
}

/*
 * A WRITE whose payload can no longer arrive (we stopped receiving) is
 * handed back to conn.c, which answers or drops it.
 */
static void settle(struct tcp_conn *tc)
{
	if (tc->data_req && !(tc->recv_busy && tc->data_direct) &&
	    !tc->drain_reading &&
	    (tc->rd_closed || tc->c.state == TGT_CONN_CLOSING)) {
		data_finished(tc, -EPIPE);
		if (tc->discarding)
			tc->rhead = tc->rtail = 0;
	}
}

static void recv_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tcp_conn *tc = TC_OF_EV(ev, recv_ev);
	bool direct = tc->data_direct;

	tc->recv_busy = false;
	tc->data_direct = false;
	if (res == -EINTR || res == -EAGAIN || res == -ENOBUFS) {
		post_recv(tc);
		tgt_conn_put(&tc->c);
		return;
	}
	if (res <= 0) {
		tc->rd_closed = true;
		if (tc->data_req)
			data_finished(tc, -EPIPE);	/* cut short */
		linger_cancel(tc);	/* the peer's FIN came */
		if (tc->c.state != TGT_CONN_CLOSING) {
			char why[96];

			snprintf(why, sizeof(why), "%s", res == 0 ?
				 "peer closed the connection" : strerror(-res));
			tgt_conn_close(&tc->c, res != 0, why);
		}
		tcp_maybe_fin(tc);
		tgt_conn_put(&tc->c);
		return;
	}
	if (direct) {
		tc->data_got += res;
		if (tc->data_got == tc->data_need)
			data_finished(tc, 0);
	} else {
		tc->rtail += res;
	}
	parse(tc);
	post_recv(tc);
	tcp_drain_check(tc);
	settle(tc);
	tcp_maybe_fin(tc);
	tgt_conn_put(&tc->c);
}

static void post_recv(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;
	void *dst;
	size_t len;

	if (tc->recv_busy || tc->rd_closed || (tc->paused && !tc->discarding) ||
	    (tc->c.state == TGT_CONN_CLOSING && !tc->drain_reading &&
	     !tc->discarding))
		return;
	if (tc->data_req && !tc->discarding && tc->rhead == tc->rtail &&
	    tc->data_req->buf_cap > tc->data_got) {
		/* Payload goes straight into the request's pool chunk, as
		 * far as it has room (data_room grows it once bytes come). */
		tc->rhead = tc->rtail = 0;
		dst = (uint8_t *)tc->data_req->buf + tc->data_got;
		len = tc->data_req->buf_cap - tc->data_got;
		if (len > tc->data_need - tc->data_got)
			len = tc->data_need - tc->data_got;
		tc->data_direct = true;
	} else {
		if (tc->rhead == tc->rtail) {
			tc->rhead = tc->rtail = 0;
		} else if (tc->rhead > 0 && tc->rtail == TCP_RBUF_SIZE) {
			memmove(tc->rbuf, tc->rbuf + tc->rhead,
				tc->rtail - tc->rhead);
			tc->rtail -= tc->rhead;
			tc->rhead = 0;
		}
		if (tc->rtail == TCP_RBUF_SIZE)
			return;	/* full of unparsed PDUs: parse first */
		dst = tc->rbuf + tc->rtail;
		len = TCP_RBUF_SIZE - tc->rtail;
	}
	sqe = tgt_reactor_sqe(tc->c.r);
	io_uring_prep_recv(sqe, tc->fd, dst, len, 0);
	tgt_sqe_set_event(sqe, &tc->recv_ev);
	tc->recv_busy = true;
	tgt_conn_get(&tc->c);
}

static void stop_reading(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;

	shutdown(tc->fd, SHUT_RD);
	if (tc->recv_busy) {
		/* shutdown() ends a pending RECV; cancel covers the rest. */
		sqe = tgt_reactor_sqe(tc->c.r);
		io_uring_prep_cancel(sqe, &tc->recv_ev, 0);
		tgt_sqe_set_event(sqe, NULL);
	}
}

/* From now on input is read and dropped, and the FIN follows the last
 * answer (maybe_fin). */
static void start_discarding(struct tcp_conn *tc)
{
	tc->discarding = true;
	tc->paused = false;
	if (!tc->data_req)
		tc->rhead = tc->rtail = 0;
	post_recv(tc);
	tcp_maybe_fin(tc);
}

/*
 * Draining for a stop: capsules that arrive while accepted requests are
 * still running are answered SHUTTING_DOWN; once none is left running,
 * stop parsing, so the connection ends as soon as its answers are out.
 */
void tcp_drain_check(struct tcp_conn *tc)
{
	if (!tc->drain_reading || tc->c.nbusy || tc->data_req)
		return;
	tc->drain_reading = false;
	start_discarding(tc);
}

static void linger_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tcp_conn *tc = TC_OF_EV(ev, linger_ev);

	tc->linger_armed = false;
	/* The peer has not closed its side in time: stop waiting for it,
	 * and for its acks of zero-copy sends (the pages come back). */
	if (res == -ETIME && !tc->rd_closed) {
		stop_reading(tc);
		tcp_send_abort(tc);
	}
	tgt_conn_put(&tc->c);
}

/*
 * Closing gracefully, and every answer is in the kernel: FIN after them,
 * then wait for the peer's FIN (reading and dropping what it still sends)
 * before the socket is closed, TCP_LINGER_S at most.
 */
void tcp_maybe_fin(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;

	if (!tc->discarding || tc->wr_shut || tc->wr_dead || tc->send_inflight ||
	    !STAILQ_EMPTY(&tc->tx) || tc->data_req || !tgt_conn_quiet(&tc->c))
		return;
	tc->wr_shut = true;
	shutdown(tc->fd, SHUT_WR);
	if (tc->rd_closed)
		return;
	tc->linger_ts.tv_sec = TCP_LINGER_S;
	tc->linger_ts.tv_nsec = 0;
	sqe = tgt_reactor_sqe(tc->c.r);
	io_uring_prep_timeout(sqe, &tc->linger_ts, 0, 0);
	tgt_sqe_set_event(sqe, &tc->linger_ev);
	tc->linger_armed = true;
	tgt_conn_get(&tc->c);
}

static void linger_cancel(struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe;

	if (!tc->linger_armed)
		return;
	sqe = tgt_reactor_sqe(tc->c.r);
	io_uring_prep_timeout_remove(sqe, (uint64_t)(uintptr_t)&tc->linger_ev, 0);
	tgt_sqe_set_event(sqe, NULL);
}

static void kick_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tcp_conn *tc = TC_OF_EV(ev, kick_ev);

	tc->kick_busy = false;
	parse(tc);
	post_recv(tc);
	tcp_drain_check(tc);
	settle(tc);
	tcp_maybe_fin(tc);
	tgt_conn_put(&tc->c);
}

/* Parse again on the next loop turn (never re-entrantly from conn.c). */
void tcp_kick(struct tcp_conn *tc)
{
	tgt_conn_defer_once(&tc->c, &tc->kick_ev, &tc->kick_busy);
}

static int tcp_fetch_data(struct tgt_req *req)
{
	struct tcp_conn *tc = tc_of(req->conn);

	tc->data_req = req;
	tc->data_need = req->length;
	tc->data_got = 0;
	return 0;
}

static void tcp_resume(struct tgt_conn *c)
{
	struct tcp_conn *tc = tc_of(c);

	tc->paused = false;
	tcp_kick(tc);
}

/* ---- teardown -------------------------------------------------------- */

static void tcp_shutdown(struct tgt_conn *c, bool force)
{
	struct tcp_conn *tc = tc_of(c);
	struct io_uring_sqe *sqe;

	if (force) {
		/* Dropped, not closed: the close resets the connection, so
		 * answers a peer never read are not kept queued in the
		 * kernel behind a zero window (nor the FIN behind them). */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		tc->drain_reading = false;
		tc->wr_dead = true;
		setsockopt(tc->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		shutdown(tc->fd, SHUT_RDWR);
		if (tc->recv_busy) {
			sqe = tgt_reactor_sqe(c->r);
			io_uring_prep_cancel(sqe, &tc->recv_ev, 0);
			tgt_sqe_set_event(sqe, NULL);
		}
		tcp_send_abort(tc);
		linger_cancel(tc);
	} else if (c->draining && !tc->rd_closed && !tc->discarding) {
		/* Stop of the target: keep reading for a while (see
		 * drain_check) so late capsules get SHUTTING_DOWN. */
		tc->drain_reading = true;
	} else if (!tc->discarding) {
		start_discarding(tc);
	}
	/* Capsules already buffered are handled on the next turn, never
	 * from inside conn.c; a paused parse resumes to answer them. */
	tc->paused = false;
	tcp_kick(tc);
}

static void tcp_free(struct tgt_conn *c)
{
	struct tcp_conn *tc = tc_of(c);

	if (tc->fd >= 0)
		close(tc->fd);
	free(tc->rbuf);
	free(tc);
}

const struct tgt_transport_ops tgt_transport_tcp = {
	.name = "tcp",
	.flags = TGT_TP_F_INBAND_DATA | TGT_TP_F_GROW_DATA,
	.listen = tcp_listen,
	.listener_fd = tcp_listener_fd,
	.accept = tcp_accept,
	.unlisten = tcp_unlisten,
	.fetch_data = tcp_fetch_data,
	.send_rsp = tcp_send_rsp,
	.send_pdu = tcp_send_pdu,
	.resume = tcp_resume,
	.shutdown = tcp_shutdown,
	.free = tcp_free,
};
