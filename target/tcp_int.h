/* SPDX-License-Identifier: MIT */
/*
 * Internals of the target TCP transport shared by its files: tcp.c
 * (listener, receive path, close) and tcp_send.c (answers out, zero-copy
 * sends).  docs/target.md ("Connections and transports") describes the
 * design.
 */
#ifndef RBLK_TARGET_TCP_INT_H
#define RBLK_TARGET_TCP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "config.h"
#include "conn.h"
#include "reactor.h"

#define TCP_IOV_MAX	64
#define TCP_CTRL_LIMIT	(256u << 10)	/* queued control bytes before we stop reading */

/* One queued piece of output: a request's RSP (+ READ data) or a copy of
 * a control PDU. */
struct tcp_tx {
	STAILQ_ENTRY(tcp_tx) link;	/* in tcp_conn.tx, send order */
	struct tgt_req *req;		/* NULL for a control PDU */
	struct iovec iov[2];
	unsigned niov;
	size_t total, sent;
	bool zc;			/* a zero-copy send named its pages */
	uint8_t data[];			/* control PDU bytes */
};
_Static_assert(sizeof(struct tcp_tx) <= sizeof(((struct tgt_req *)0)->tp),
	       "tcp_tx must fit in tgt_req.tp");

struct tcp_zc;

struct tcp_conn {
	struct tgt_conn c;		/* first: conn.c's view */
	int fd;				/* -1 once closed early (tcp_send_abort) */
	struct tgt_event recv_ev, send_ev, kick_ev, work_ev, linger_ev;
	struct tgt_work work;
	bool recv_busy, kick_busy;
	bool paused;			/* conn.c said -EAGAIN */
	bool rd_closed, wr_dead;
	bool drain_reading;		/* stopping: still answering capsules */
	bool discarding;		/* closing: input is read and dropped */
	bool wr_shut;			/* FIN sent after the last answer */
	bool linger_armed;		/* waiting for the peer's FIN (holds a ref) */
	struct __kernel_timespec linger_ts;
	uint8_t *rbuf;
	uint32_t rhead, rtail;		/* unparsed bytes are [rhead, rtail) */
	struct tgt_req *data_req;	/* WRITE payload being received */
	uint32_t data_need, data_got;
	bool data_direct;		/* the RECV in flight targets data_req */
	uint32_t skip;			/* rest of a refused PDU to drop */
	/* send side (tcp_send.c) */
	STAILQ_HEAD(tcp_tx_list, tcp_tx) tx;	/* queued output, oldest first */
	size_t ctrl_bytes;
	struct tgt_event *send_inflight; /* the send in flight (send_ev or a
					  * zero-copy send's); NULL: none */
	enum tgt_tcp_zc zc_mode;	/* OFF once the kernel said it copies */
	bool zc_report;			/* the kernel says when it copied */
	TAILQ_HEAD(tcp_zc_list, tcp_zc) zc;	/* zero-copy sends not yet notified */
	struct msghdr msg;
	struct iovec iov[TCP_IOV_MAX];
};

#define TC_OF_EV(ev, member) \
	((struct tcp_conn *)((char *)(ev) - offsetof(struct tcp_conn, member)))

static inline struct tcp_conn *tc_of(struct tgt_conn *c)
{
	return (struct tcp_conn *)c;
}

/* tcp.c: what the send path calls when answers went out. */
void tcp_drain_check(struct tcp_conn *tc);
void tcp_maybe_fin(struct tcp_conn *tc);
void tcp_kick(struct tcp_conn *tc);

/* tcp_send.c */
void tcp_send_init(struct tcp_conn *tc, enum tgt_tcp_zc mode, bool report);
void tcp_send_rsp(struct tgt_req *req);
int tcp_send_pdu(struct tgt_conn *c, const void *pdu, size_t len);
/* Dropping the connection: cancels the send in flight; with zero-copy
 * sends still read by the kernel, closes the socket now (reset) so that
 * they end, rather than wait for a peer that may never ack them. */
void tcp_send_abort(struct tcp_conn *tc);
/* Whether zero-copy sends work here (main thread, at listen): *report
 * says whether the kernel tells when it copied anyway (6.2+). */
bool tcp_zc_probe(bool *report);

#endif /* RBLK_TARGET_TCP_INT_H */
