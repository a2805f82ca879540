/* SPDX-License-Identifier: MIT */
/*
 * Target side of a transport (TCP now, RDMA later).  The protocol logic
 * (login, command validation, request table, backend calls) lives in
 * conn.c and is transport-neutral; a transport only moves bytes:
 *
 *   main thread:    listen / listener_fd / accept / unlisten
 *   reactor thread: fetch_data, send_rsp, send_pdu, resume, shutdown, free
 *
 * A transport embeds struct tgt_conn at the start of its own connection
 * struct, calls tgt_conn_init() on the reactor that owns it, and feeds each
 * received PDU to tgt_conn_pdu().  Callbacks run on the owning reactor and
 * must never call back into conn.c synchronously (complete through the
 * reactor's event loop or tgt_reactor_defer instead): conn.c is not
 * re-entrant.
 */
#ifndef RBLK_TARGET_TRANSPORT_H
#define RBLK_TARGET_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

struct tgt_conn;
struct tgt_req;
struct tgt_listener;
struct tgt_server;

/* Transport flags */
#define TGT_TP_F_INBAND_DATA	(1u << 0)	/* WRITE data follows the capsule, READ data the RSP (TCP) */
#define TGT_TP_F_GROW_DATA	(1u << 1)	/* fetch_data gets no chunk: it takes one as bytes arrive (tgt_req_data_room) */

struct tgt_transport_ops {
	const char *name;
	unsigned flags;			/* TGT_TP_F_* */

	/*
	 * Required, main thread: starts listening on addr (transport syntax,
	 * TCP "host:port").  Returns 0 and *lp, or -errno (and logs why).
	 */
	int  (*listen)(struct tgt_server *srv, const char *addr,
		       struct tgt_listener **lp);
	/* Required, main thread: the fd the main loop polls for POLLIN. */
	int  (*listener_fd)(struct tgt_listener *l);
	/*
	 * Required, main thread, when listener_fd is readable: accepts what
	 * is pending and hands each connection to a reactor
	 * (tgt_server_pick_reactor + tgt_reactor_post_work).  Never blocks.
	 * Returns 0 when drained, or -errno when it cannot go on now: out of
	 * descriptors or memory (-EMFILE, -ENFILE, -ENOBUFS, -ENOMEM) or a
	 * listener-level failure.  The main loop logs that (rate-limited)
	 * and stops polling the listener for 100 ms, doubling to 1 s while
	 * it keeps failing; what is pending waits in the backlog meanwhile.
	 * A transport must not log per attempt nor return 0 while the
	 * condition lasts: the fd stays readable, poll would spin.
	 */
	int  (*accept)(struct tgt_listener *l);
	/* Required, main thread: stops listening and frees l. */
	void (*unlisten)(struct tgt_listener *l);

	/*
	 * Required, reactor thread: bring req->length bytes of WRITE payload
	 * into req->buf (TCP: they follow the capsule in the stream; RDMA:
	 * RDMA READ from req's keyed SGL).  Later calls tgt_req_data_done().
	 * With TGT_TP_F_GROW_DATA req->buf is NULL at first and the
	 * transport sizes it with tgt_req_data_room() as the bytes come.
	 * Returns 0, or -errno when it cannot start (then no callback).
	 */
	int  (*fetch_data)(struct tgt_req *req);
	/*
	 * Required, reactor thread: sends req->rsp (req->rsp_len bytes) and,
	 * for a successful READ, req->length bytes of req->buf after it.
	 * Always ends in one tgt_req_sent(req, err) call (err -errno when the
	 * connection could not deliver it).
	 */
	void (*send_rsp)(struct tgt_req *req);
	/*
	 * Required, reactor thread: queues a control PDU (LOGIN_RSP,
	 * DISCOVER_RSP, error RSP not tied to a request slot).  The bytes
	 * are copied.  Returns 0 or -ENOMEM.
	 */
	int  (*send_pdu)(struct tgt_conn *c, const void *pdu, size_t len);
	/*
	 * Required, reactor thread: conn.c returned -EAGAIN from
	 * tgt_conn_pdu earlier (out of buffers) and can take PDUs again.
	 */
	void (*resume)(struct tgt_conn *c);
	/*
	 * Required, reactor thread: stop receiving.  force false: queued
	 * responses still go out (graceful: after a refused LOGIN, DISCOVER,
	 * or a SIGTERM drain); force true: drop the connection now, failing
	 * queued sends.  May be called twice (graceful, then force).  The
	 * transport drops its references as its operations end.
	 */
	void (*shutdown)(struct tgt_conn *c, bool force);
	/* Required, reactor thread: last reference gone; free everything. */
	void (*free)(struct tgt_conn *c);
	/*
	 * Optional, reactor thread: LOGIN is about to be accepted with depth
	 * slots; make room for that many commands before the LOGIN_RSP goes
	 * out (RDMA: receive buffers, allocated only now so that a
	 * connection that never logs in stays small).  0, -EINVAL (depth
	 * more than the transport granted: the LOGIN is refused
	 * INVALID_FIELD) or another -errno (refused NO_RESOURCES).
	 */
	int  (*login)(struct tgt_conn *c, unsigned depth);
	/*
	 * Optional, reactor thread: take the completions held back to save
	 * wakeups now (RDMA: answers' send completions, docs/rdma.md "Send
	 * completions"), so that what they free comes back.  Called on the
	 * reactor's tick and when someone starts waiting for memory.
	 */
	void (*reap)(struct tgt_conn *c);
};

extern const struct tgt_transport_ops tgt_transport_tcp;
extern const struct tgt_transport_ops tgt_transport_rdma;	/* target/rdma_listen.c */

#endif /* RBLK_TARGET_TRANSPORT_H */
