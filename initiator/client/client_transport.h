/* SPDX-License-Identifier: MIT */
/*
 * Client-side transport interface.  The queue core (client.c) owns tags,
 * LOGIN, the completion list and error policy; a transport only moves bytes
 * (TCP: client_tcp.c) or work requests (RDMA: client_rdma.c).  Transports are
 * const ops tables listed in one registry array in client.c and picked by
 * name ("tcp", "rdma").
 *
 * Every callback is called from the one thread that owns the queue (no
 * locks).  Every callback that can fail returns 0 (or a count) or -errno.
 * After any I/O-path callback (submit, poll) returned an error the core
 * considers the connection dead: it fails all outstanding I/O itself and
 * calls nothing on the connection again except close.
 *
 * Life of a connection:
 *   connect -> send_msg(LOGIN) -> recv_msg(LOGIN_RSP) [-> send/recv again
 *   for the auth challenge] -> start(granted geometry) -> [reg_buffer ...]
 *   -> submit/keepalive/poll ... -> close.  A queue goes through many
 *   connections when it reconnects; close must leave nothing the device
 *   may still touch (RDMA: flushed WRs reaped before the MRs go).   DISCOVER uses connect, send_msg, recv_msg, close only.
 */
#ifndef RBLK_INITIATOR_CLIENT_CLIENT_TRANSPORT_H
#define RBLK_INITIATOR_CLIENT_CLIENT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rblk_client.h"

/* A transport's per-connection state; each transport defines the struct. */
struct rblk_client_conn;

/* A stopping caller (rblk_client_opts.stop), for waits that may block. */
struct rblk_client_stop {
	int  (*fn)(void *arg);		/* NULL: never stops */
	void  *arg;
};

/*
 * Waits up to timeout_ms (-1: no limit) for events on fd, asking stop
 * every RBLK_STOP_POLL_MS; EINTR is retried.  0 when ready (*revents set
 * if not NULL), -ETIMEDOUT, -ECANCELED when stop said so, or -errno.
 */
int rblk_client_wait_fd(int fd, short events, int timeout_ms,
			const struct rblk_client_stop *stop, short *revents);

struct rblk_client_conn_params {
	const char *host;
	const char *port;		/* never NULL: the core fills the default */
	const char *source_addr;	/* numeric local address or NULL (TCP) */
	uint16_t    queue_id;
	uint16_t    queue_depth;	/* wanted (RDMA: CM private data, QP size) */
	int         timeout_ms;		/* connect; > 0 */
	int         stall_ms;		/* submit may wait this long for room;
					 * 0: the transport's own bound */
	struct rblk_client_stop stop;	/* setup waits and send stalls end
					 * with -ECANCELED when it says so */
};

/* What start() is told after a successful LOGIN. */
struct rblk_client_geometry {
	uint16_t queue_depth;		/* granted: never more in flight */
	uint32_t max_io;		/* largest command length */
	uint32_t inline_size;		/* WRITE bytes that may ride in the capsule */
	uint16_t max_sge;
};

struct rblk_client_transport_ops {
	const char *name;		/* "tcp", "rdma" */
	const char *default_port;	/* "4420" ... */

	/*
	 * Required.  Resolves host:port (getaddrinfo or rdma_getaddrinfo),
	 * connects within p->timeout_ms and returns the connection in *connp.
	 * On failure returns -errno (-ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH
	 * ...) with a one-line reason in errbuf, and *connp is untouched.
	 */
	int (*connect)(const struct rblk_client_conn_params *p,
		       struct rblk_client_conn **connp,
		       char *errbuf, size_t errlen);

	/*
	 * Required.  Setup-time messages (LOGIN, DISCOVER): send_msg sends one
	 * whole PDU (len bytes, already encoded); recv_msg waits up to
	 * timeout_ms for one whole PDU, checks its header with rblk_decode_hdr
	 * against max bytes, copies it into buf and returns its length.
	 * -ETIMEDOUT on timeout, -EPROTO for a malformed header, -ECONNRESET
	 * when the peer closed.  Never used once start() has been called.
	 */
	int (*send_msg)(struct rblk_client_conn *c, const void *buf, size_t len,
			int timeout_ms);
	int (*recv_msg)(struct rblk_client_conn *c, void *buf, size_t max,
			int timeout_ms);

	/*
	 * Required.  Switches to the I/O phase with the granted geometry:
	 * allocate per-tag state (RDMA: capsule buffers, pre-posted receives
	 * for queue_depth responses).  Called once, after LOGIN succeeded.
	 */
	int (*start)(struct rblk_client_conn *c,
		     const struct rblk_client_geometry *g);

	/*
	 * Optional (NULL: any memory may hold I/O data, as on TCP).  Makes
	 * [buf, buf+len) usable as io->buf for later submits (RDMA: an MR with
	 * remote read/write access).  May be called before or after start.
	 */
	int (*reg_buffer)(struct rblk_client_conn *c, void *buf, size_t len);

	/*
	 * Required.  Sends the command for io on tag io->tag (the core has
	 * checked opcode, length <= max_io and that the tag is free; the
	 * target gets at most queue_depth commands at once).  WRITE data goes
	 * with it (TCP: in-band after the capsule; RDMA: inline or as keyed
	 * SGEs of a registered buffer).  May wait for socket space, and must
	 * then keep receiving responses (as poll does, completing them
	 * through q): a target whose buffers are all held by answers we have
	 * not read stops reading us, and only our reading frees them.
	 * Returns 0, -EINVAL if io->buf is not usable (e.g. not registered;
	 * nothing was sent), or another -errno when the connection failed.
	 */
	int (*submit)(struct rblk_client_conn *c, struct rblk_queue *q,
		      struct rblk_io *io);

	/*
	 * Optional (NULL: submit sends at once).  With it, submit may leave
	 * its command for flush to send, together with every other command
	 * submitted since (RDMA: one ibv_post_send, so one doorbell, for all
	 * of them; TCP: one sendmsg, which may wait for socket space and
	 * then receives responses through q, as submit does).  The core
	 * calls it at the end of rblk_queue_submit, from rblk_queue_flush,
	 * before reap and peek read answers, and after reissuing held
	 * commands.  Returns 0, or -errno when the connection
	 * failed: what was left unsent then goes again on the next one, as
	 * after a failed submit.
	 */
	int (*flush)(struct rblk_client_conn *c, struct rblk_queue *q);

	/*
	 * Required.  Sends one KEEPALIVE PDU (encoded by the caller, 24
	 * bytes) in the I/O phase; its answer comes through poll, which calls
	 * rblk_client_keepalive_rsp().  The core has at most one outstanding.
	 * Returns 0 or -errno when the connection failed.
	 */
	int (*keepalive)(struct rblk_client_conn *c, struct rblk_queue *q,
			 const void *pdu, size_t len);

	/*
	 * Required.  Makes progress: waits up to timeout_ms (0: only what is
	 * already there; -1: no limit) for responses, and for each whole one
	 * calls rblk_client_complete().  READ data must be in io->buf before
	 * that call (TCP: read it in after looking the tag up with
	 * rblk_client_inflight_io(); RDMA: the target wrote it already).
	 * Returns how many responses it completed (0 on timeout) or -errno
	 * when the connection failed or the target sent something malformed
	 * (-EPROTO); rblk_client_complete's error return must be passed up.
	 */
	int (*poll)(struct rblk_client_conn *c, struct rblk_queue *q,
		    int timeout_ms);

	/*
	 * Required.  An fd that becomes readable when poll(.., 0) may find
	 * work (TCP: the socket; RDMA: the CQ completion channel, armed).
	 */
	int (*get_fd)(struct rblk_client_conn *c);

	/*
	 * Optional.  spin 1: the caller calls poll(.., 0) in a loop and does
	 * not wait on get_fd, so poll may skip what only a waiter needs (RDMA:
	 * the completion channel, whose check is a syscall).  spin 0 (the
	 * state after connect): get_fd wakes a waiter again; the caller must
	 * call poll(.., 0) once more before it waits, since what arrived
	 * before this call may raise no wakeup.
	 */
	void (*set_spin)(struct rblk_client_conn *c, int spin);

	/*
	 * Optional (NULL: poll(.., 0) is used).  Like poll(.., 0), but free
	 * when nothing came: it may skip every check that costs a syscall
	 * (RDMA: the completion and CM channels), because the caller waits on
	 * get_fd right after, and that wakes it for whatever was skipped.
	 */
	int (*peek)(struct rblk_client_conn *c, struct rblk_queue *q);

	/* Required.  Tears the connection down and frees c; c may be
	 * half-started (start not called) or have failed. */
	void (*close)(struct rblk_client_conn *c);
};

extern const struct rblk_client_transport_ops rblk_client_tcp_ops;
/* Defined by client_rdma.c; the registry in client.c lists it when built. */
extern const struct rblk_client_transport_ops rblk_client_rdma_ops;

/*
 * Called by transports from poll().  rblk_client_inflight_io returns the I/O
 * in flight on tag, or NULL when the tag is out of range or not in flight
 * (the target misbehaved: return -EPROTO).  rblk_client_complete records the
 * response for that tag; it returns 0, or -EPROTO when the response does not
 * fit the command (unknown tag, READ data length, value) and the transport
 * must then fail the connection.  data_len is the READ data that came with
 * the response (TCP) or the byte count the transport knows was written
 * (RDMA: pass rsp->value for a successful READ).
 */
struct rblk_io *rblk_client_inflight_io(struct rblk_queue *q, uint32_t tag);
int rblk_client_complete(struct rblk_queue *q, const struct rblk_rsp *rsp,
			 uint32_t data_len);

/*
 * Called by transports from poll() for a KEEPALIVE_RSP that decoded
 * (rblk_decode_keepalive), solicited or not; size is the volume's size
 * it carries (0: none said).  Returns 0.
 */
int rblk_client_keepalive_rsp(struct rblk_queue *q, uint16_t status, uint64_t seq,
			      uint64_t size);

/* Formats a one-line reason into errbuf (which may be NULL). */
void rblk_client_set_err(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* RBLK_INITIATOR_CLIENT_CLIENT_TRANSPORT_H */
