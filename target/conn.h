/* SPDX-License-Identifier: MIT */
/*
 * Transport-neutral connection (one queue of one initiator): state machine
 * NEW -> LIVE -> CLOSING, the request table (one slot per tag), and the
 * path capsule -> backend -> response.  Every function runs on the reactor
 * thread that owns the connection.
 */
#ifndef RBLK_TARGET_CONN_H
#define RBLK_TARGET_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "export.h"
#include "backend.h"
#include "bufshare.h"
#include "hosts.h"
#include "reactor.h"
#include "rblk_proto.h"
#include "stats.h"
#include "transport.h"

enum tgt_conn_state {
	TGT_CONN_NEW,		/* waiting for LOGIN or DISCOVER */
	TGT_CONN_LIVE,		/* logged in: commands */
	TGT_CONN_CLOSING,	/* no new work; draining to free */
};

struct tgt_req {
	struct tgt_io   io;		/* backend I/O; must stay first */
	struct tgt_conn *conn;
	struct tgt_event ev;		/* transport's completion plumbing */
	uint32_t tag;
	uint8_t  opcode;
	uint8_t  flags;
	uint16_t status;
	bool     busy;
	uint64_t offset;
	uint32_t length;
	void    *buf;			/* pool chunk for READ/WRITE, or NULL */
	uint32_t buf_cap;		/* its size: what the caps are charged */
	bool     fetching;		/* WRITE payload on its way (fetch_data) */
	bool     pinned;		/* answer with data handed to the transport */
	uint64_t fetch_ms;		/* since (reactor clock), for data_timeout */
	uint64_t fetch_paused;		/* the conn's paused time then (bufshare.h) */
	uint64_t start_ns;
	uint8_t  rsp[sizeof(struct rblk_wire_rsp)];
	uint32_t rsp_len;
	uint32_t data_len;		/* READ data after the RSP (in-band) */
	/* Transport-private space (TCP: send-queue link and progress). */
	union {
		uint64_t u64[12];
		void    *ptr[12];
	} tp;
};

struct tgt_conn {
	const struct tgt_transport_ops *ops;
	struct tgt_server  *srv;
	struct tgt_reactor *r;
	struct tgt_conn    *next;	/* reactor's connection list */
	enum tgt_conn_state state;
	bool     draining;		/* target stopping: answer, then close */
	bool     force_closed;
	int      refs;
	char     peer[80];		/* "ip:port" for logs */
	struct sockaddr_storage peer_sa;	/* real peer address (ACL); AF_UNSPEC if unknown */
	char     host[RBLK_NAME_MAX];	/* from LOGIN/DISCOVER */
	struct tgt_volume *vol;
	uint32_t vol_epoch;		/* vol->epoch at LOGIN */
	uint32_t login_gen;		/* vol->login_gen this LOGIN made */
	bool     probe;			/* logged in as a path probe: log quietly */
	uint64_t session_id;
	uint16_t queue_id;
	unsigned depth;
	struct tgt_req *reqs;		/* depth slots */
	unsigned nbusy;
	unsigned ndisk;			/* requests at the backend */
	unsigned nfetch;		/* requests whose payload is on its way */
	struct tgt_conn_share share;	/* pool memory it holds and waits for */
	struct tgt_host *phost;		/* its peer address's counts (hosts.h) */
	int      refused;		/* over a connection limit: -ENFILE / -EMFILE */
	uint64_t last_rx_ms, last_tx_ms; /* last PDU in, last reply out (reactor clock) */
	struct rblk_cmd_limits lim;
	/* The status PDU that closes the connection (tgt_conn_fatal), held
	 * until the answers of the commands already running are out. */
	uint8_t  last_pdu[sizeof(struct rblk_wire_login_rsp)];
	uint8_t  last_len;
	struct tgt_event login_ev;	/* login_timeout timer */
	struct __kernel_timespec login_ts;
	bool     login_timer;		/* armed (holds a reference) */
	bool     login_timer_cancelled;
	struct tgt_io_stats stats;
	struct tgt_session *sess;	/* after LOGIN: holds the export (export.h) */
	struct tgt_auth_state auth;	/* LOGIN challenge state */
	/* Its host's entry, counting it as not logged in yet (hosts.h,
	 * tgt_host_prelogin_get): set by the transport at accept, before
	 * tgt_conn_init; released at LOGIN or free. */
	struct tgt_host *prelogin;
};

/*
 * Zeroed memory for a transport's connection struct of size bytes (which
 * starts with struct tgt_conn), aligned as struct tgt_conn needs: its
 * stats are cache-line aligned, more than malloc promises.  NULL when out
 * of memory; release with free().
 */
void *tgt_conn_alloc(size_t size);

/*
 * Transport -> conn.  tgt_conn_init links c into r's list with one
 * reference (dropped by tgt_conn_close).  peer is for logs; peer_sa is the
 * address the transport itself saw (getpeername, rdma_get_peer_addr), the
 * only thing allow_hosts address entries are matched against (NULL when
 * unknown: then none matches).
 */
void tgt_conn_init(struct tgt_conn *c, const struct tgt_transport_ops *ops,
		   struct tgt_server *srv, struct tgt_reactor *r,
		   const char *peer, const struct sockaddr *peer_sa);

/*
 * A received PDU.  buf holds `have` bytes: the whole PDU for every type but
 * CMD, and for a CMD the 64-byte capsule plus its descriptors; pdu_len is
 * the header's length, already checked by rblk_decode_hdr.  Returns:
 *   0        consumed.  For a CMD, if the transport's fetch_data was called
 *            during this call the payload belongs to that request; else
 *            the transport discards the rest of the PDU.
 *   -EAGAIN  not consumed (out of buffers); offer it again after
 *            ops->resume().
 *   -ECONNABORTED  the connection is closing (conn.c may have answered
 *            with tgt_conn_fatal): take no more PDUs, do not force it.
 *   other    out of memory: force the connection closed.
 */
int tgt_conn_pdu(struct tgt_conn *c, const void *buf, size_t have,
		 uint32_t pdu_len);

/*
 * fetch_data finished: 0 = payload is in req->buf; -EPIPE = it can never
 * arrive (the stream ended or stopped being read): the command is dropped
 * without a reply; other -errno = moving it from initiator memory failed
 * (answered REMOTE_ACCESS).  While the target stops, every failure is
 * answered SHUTTING_DOWN.
 */
void tgt_req_data_done(struct tgt_req *req, int err);
/*
 * TGT_TP_F_GROW_DATA transports: make req->buf hold at least need bytes
 * of the WRITE payload, want if it can (need <= want <= req->length),
 * keeping the first have bytes.  The chunk is taken as the payload
 * arrives, not when the capsule does, so a client that announces 1 MiB
 * and sends 1 byte holds 4 KiB.  Returns 0 (req->buf, req->buf_cap have
 * room), or -EAGAIN when the pool or a cap (connection, host) is short:
 * stop receiving; ops->resume() follows once memory may be there.
 */
int tgt_req_data_room(struct tgt_req *req, uint32_t have, uint32_t need,
		      uint32_t want);

/* send_rsp finished (err -errno if not delivered): releases the slot. */
void tgt_req_sent(struct tgt_req *req, int err);

/*
 * Like tgt_req_sent, but the data chunk stays with the caller, still
 * charged to the connection, until it hands it to tgt_share_put(): a
 * zero-copy send lets the slot go at once (the client may reuse the tag
 * as soon as it has the answer) while the kernel still reads the chunk.
 */
void tgt_req_sent_keep(struct tgt_req *req, int err, void **buf,
		       uint32_t *cap);

/*
 * A framing or state error the transport or conn.c found (status says
 * which; type is the PDU header's type byte): closes gracefully and tells
 * the peer the status with the one PDU it can read in this state, after
 * the answers of the commands already running (docs/protocol.md, "Errors
 * that close the connection").  Before LOGIN that is a LOGIN_RSP, or a
 * DISCOVER_RSP when type is DISCOVER; after it a RSP with tag
 * RBLK_TAG_NONE.  why is logged as for tgt_conn_close.  A connection that
 * is closing already (target stopping) is forced closed instead.
 * Transports close the stream only once tgt_conn_quiet() holds.
 */
void tgt_conn_fatal(struct tgt_conn *c, int status, uint8_t type,
		    const char *why);

/*
 * Starts closing (idempotent; force upgrades a graceful close).  reason
 * is logged once at info level (NULL: no log line).
 */
void tgt_conn_close(struct tgt_conn *c, bool force, const char *reason);

/* Closing, conn.c has nothing more to hand the transport: every request
 * answered and the closing status (if any) queued. */
static inline bool tgt_conn_quiet(const struct tgt_conn *c)
{
	return !c->nbusy && !c->last_len;
}

void tgt_conn_get(struct tgt_conn *c);
/* Drops a reference; the last one unlinks c and calls ops->free(c). */
void tgt_conn_put(struct tgt_conn *c);
/*
 * Queues ev to run on the next reactor turn, never from inside the caller
 * (conn.c's callbacks must not be re-entered), unless *queued says it
 * already waits.  Holds a reference meanwhile: ev->done clears *queued and
 * ends with tgt_conn_put(c).
 */
void tgt_conn_defer_once(struct tgt_conn *c, struct tgt_event *ev, bool *queued);

/* Reactor stop hooks (server.c wires them into tgt_reactor_params). */
void tgt_conns_stop(struct tgt_reactor *r, bool force);
bool tgt_conns_busy(struct tgt_reactor *r);
/* Reactor tick (about 1 Hz): idle_timeout, data_timeout, stall_timeout. */
void tgt_conns_tick(struct tgt_reactor *r);
/* The tick server.c wires in: tells sessions of a grown volume its size
 * (conn_ctrl.c), then tgt_conns_tick. */
void tgt_conns_ctrl_tick(struct tgt_reactor *r);

#endif /* RBLK_TARGET_CONN_H */
