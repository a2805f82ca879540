/* SPDX-License-Identifier: MIT */
/*
 * Internals of the target RDMA transport shared by its files:
 * rdma_listen.c (main thread: devices, listener, CONNECT_REQUEST ->
 * connection), rdma.c (reactor thread: data path), rdma_poll.c
 * (completions, CM events) and rdma_teardown.c (drain, destroy), each
 * calling only those after it.  docs/rdma.md describes the design.
 */
#ifndef RBLK_TARGET_RDMA_INT_H
#define RBLK_TARGET_RDMA_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "poll_mode.h"
#include "rblk_proto.h"
#include "rdma_verbs.h"
#include "reactor.h"

#define RX_SIZE		(sizeof(struct rblk_wire_cmd) + \
			 RBLK_MAX_SGE * sizeof(struct rblk_wire_sge) + RBLK_DEFAULT_INLINE)
#define RSP_SLOT	32
#define CTL_SMALL	16		/* control PDU slots of CTL_SMALL_SIZE */
#define CTL_SMALL_SIZE	128
#define CTL_BIG		2		/* DISCOVER_RSP sized slots */
#define CTL_BIG_SIZE	(sizeof(struct rblk_wire_discover_rsp) + \
			 RBLK_DISCOVER_MAX * sizeof(struct rblk_wire_discover_entry))
#define CTL_SLOTS	(CTL_SMALL + CTL_BIG)
/* Receives posted before LOGIN: LOGIN, a second LOGIN after a challenge,
 * or DISCOVER come one at a time.  The depth granted at connect gets its
 * receive buffers only once LOGIN has passed (rdmat_login). */
#define PRE_RX		2
/* Send-queue WRs for data (RDMA READ/WRITE chains + response SENDs) per
 * connection, whatever its depth: more wait in the connection's FIFO.
 * Control PDUs (CTL_SLOTS) and the drain marker have room of their own. */
#define SQ_DATA_MAX	512
#define CQ_BATCH	32
#define MAX_DEVS	8

/* One RDMA device as the target uses it: a PD and, per reactor, an MR over
 * that reactor's buffer pool.  Shared by the listener and its connections,
 * freed by whoever drops the last reference (any thread). */
struct rdma_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr **pool_mr;	/* [n_reactors], registered on demand */
	unsigned n_reactors;
	atomic_int refs;
};

struct tgt_listener {
	struct tgt_server *srv;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rdma_dev *devs[MAX_DEVS];
	char addr[160];
};

struct rx_slot {
	struct tgt_event ev;
	struct rdma_conn *rc;
	uint8_t *buf;
	uint32_t lkey;
	uint32_t len;			/* bytes received */
	struct rx_slot *next;		/* pending FIFO */
};

struct ctl_slot {
	struct tgt_event ev;
	struct rdma_conn *rc;
	uint8_t *buf;
	uint32_t size;
	bool busy;
};

/* Per tag: the keyed descriptors of the command on that tag. */
struct tag_sgl {
	uint16_t n;			/* 0: WRITE data was inline */
	struct rblk_sge sge[RBLK_MAX_SGE];
};

/* Per tag: a short chain (one data WR and the response, or one RDMA
 * READ) kept until the end of the reactor turn, when every connection
 * rings its doorbell once for all it queued (see queue_wrs).  Longer
 * chains are posted at once. */
#define BATCH_WRS	2
struct tag_wrs {
	struct ibv_send_wr wr[BATCH_WRS];
	struct ibv_sge sge[BATCH_WRS];
};

struct rdma_conn {
	struct tgt_conn c;		/* must be first */
	struct tgt_work work;
	struct tgt_server *srv;
	/* tgt_transport_rdma, set by the listener that built this */
	const struct tgt_transport_ops *ops;
	struct rdma_dev *dev;
	uint32_t pool_lkey;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *id;
	/*
	 * Two CQs on one completion channel (docs/rdma.md, "Send
	 * completions"): receives wake the reactor whenever it sleeps;
	 * sends only while something waits on one (sends_wanted, rdma_poll.c),
	 * else they are taken on the next wakeup.  That saves a wakeup per
	 * I/O: the answer's send completion.
	 */
	struct ibv_comp_channel *cc;
	struct ibv_cq *rcq;		/* receives: armed whenever asleep */
	struct ibv_cq *scq;		/* sends: armed only when wanted */
	unsigned depth;			/* granted at connect; LOGIN may not ask more */
	unsigned io_depth;		/* 0 until LOGIN passed, then its depth */

	/* Before LOGIN only this small area exists (a CONNECT
	 * REQUEST used to pin depth x 4.4 KiB of receive buffers at once). */
	uint8_t *ctl_mem;		/* ctl slots | PRE_RX rx slots */
	struct ibv_mr *ctl_mr;
	struct rx_slot rx_pre[PRE_RX];
	/* From LOGIN on: io_depth rx slots | io_depth rsp slots. */
	uint8_t *mem;
	struct ibv_mr *mem_mr;
	struct rx_slot *rx;
	struct ctl_slot ctl[CTL_SLOTS];
	unsigned ctl_inflight;
	/* Data WRs the send queue still has room for, and requests waiting
	 * for room (linked through tgt_req.tp, in order). */
	unsigned sq_free;
	struct tgt_req *sq_wait_head, *sq_wait_tail;
	struct tag_sgl *sgl;		/* [io_depth] */
	/* Send WRs queued this reactor turn (one ibv_post_send, one
	 * doorbell: on Soft-RoCE each is a system call and a wake-up of
	 * the kernel's send task). */
	struct tag_wrs *wrs;		/* [io_depth] */
	struct ibv_send_wr *post_head, *post_tail;
	struct tgt_event post_ev;
	bool post_queued;		/* post_ev deferred, holds a reference */
	/* [depth]: response posted, its send completion not seen yet.  The
	 * initiator may already have the response and reuse the tag; conn.c
	 * still holds the slot until tgt_req_sent, so such a command waits
	 * in the pending FIFO for that completion. */
	uint8_t *rsp_busy;		/* [io_depth] */
	unsigned rsp_unreaped;		/* rsp_busy entries set */
	unsigned fetches;		/* WRITE data by RDMA READ, posted or waiting */
	struct rx_slot *pend_head, *pend_tail;
	const uint8_t *cur_pdu;		/* capsule being offered to conn.c */

	struct tgt_event cm_ev, cq_ev, resume_ev;
	struct tgt_event reap_ev;	/* a CQ poll outside a wakeup */
	struct tgt_event unsig_ev;	/* unsignaled WRs: only errors show */
	struct tgt_event drain_send_ev, drain_tmo_ev;
	struct __kernel_timespec drain_ts;
	unsigned rx_posted;		/* receives the device still owns */
	bool cm_armed, cq_armed, tmo_armed, in_handler;
	enum rblk_poll_mode poll;	/* rdma_poll */
	unsigned poll_us;		/* adaptive: spin this long after work */
	uint64_t last_work_us;		/* adaptive: last poll that found work */
	bool cq_spinning;		/* cq_ev is a deferred turn, not a channel poll */
	bool scq_armed;			/* an event was asked for the next send */
	bool reap_queued;		/* reap_ev deferred, holds a reference */
	bool in_poll;			/* polling: settle_sends runs after */
	bool established, closing, disconnecting, failed, freeing, destroyed;
	bool resume_queued;
	bool send_drained;		/* send marker came back */
	bool drained;			/* transport reference dropped */
};


#define RC(cp)		((struct rdma_conn *)(cp))
#define EV_OWNER(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* rdma_listen.c: the listener, and the transport table (server.c) */
int  tgt_rdma_listen(struct tgt_server *srv, const char *addr,
		     struct tgt_listener **lp);
int  tgt_rdma_listener_fd(struct tgt_listener *l);
int  tgt_rdma_accept(struct tgt_listener *l);
void tgt_rdma_unlisten(struct tgt_listener *l);

/* rdma.c: connections and their data path; the listener hands each one
 * over and is never called back */
int  tgt_rdma_conn_prepare(struct rdma_conn *rc);
/* tgt_work fn: the reactor takes the connection over. */
void tgt_rdma_conn_start(struct tgt_reactor *r, struct tgt_work *w);
/* The connection half of tgt_transport_rdma (transport.h has each op). */
int  tgt_rdma_fetch_data(struct tgt_req *req);
void tgt_rdma_send_rsp(struct tgt_req *req);
int  tgt_rdma_send_pdu(struct tgt_conn *c, const void *pdu, size_t len);
void tgt_rdma_resume(struct tgt_conn *c);
void tgt_rdma_shutdown(struct tgt_conn *c, bool force);
int  tgt_rdma_login(struct tgt_conn *c, unsigned depth);

/* rdma_poll.c: completions and CM events, below rdma.c */
/* Main thread, before accept: the poll events' done callbacks. */
void tgt_rdma_poll_init(struct rdma_conn *rc);
/* Reactor thread: starts waiting for CM events and completions. */
void tgt_rdma_poll_start(struct rdma_conn *rc);
/* Something may now wait on a send completion (an RDMA READ, a full send
 * queue, a capsule held back, a control PDU, a close): makes sure one
 * wakes the reactor.  Cheap when nothing changed. */
void tgt_rdma_watch_sends(struct rdma_conn *rc);
/* tgt_transport_rdma's reap: takes held-back send completions now. */
void tgt_rdma_reap(struct tgt_conn *c);

/* rdma_teardown.c: failure, drain and destroy, below both */
/* Main thread, before accept: the drain events' done callbacks. */
void tgt_rdma_teardown_init(struct rdma_conn *rc);
/* Logs why (once) and forces the connection closed. */
void tgt_rdma_fail(struct rdma_conn *rc, const char *why);
/* The QP is in error: posts the send marker and arms the drain timeout. */
void tgt_rdma_post_drain(struct rdma_conn *rc);
/* Drops the transport's reference once every owned WR came back, or
 * at once when timed_out. */
void tgt_rdma_check_drained(struct rdma_conn *rc, bool timed_out);
/* Frees rc once conn.c is done with it and no poll can fire any more. */
void tgt_rdma_maybe_destroy(struct rdma_conn *rc);
/* Drops a reference to d (any thread); the last one frees PD and MRs. */
void tgt_rdma_dev_put(struct rdma_dev *d);
/* Destroys both CQs and their channel (after the QP). */
void tgt_rdma_cqs_destroy(struct rdma_conn *rc);
/* Destroys every verbs object of rc, in teardown order (not rc itself). */
void tgt_rdma_conn_release(struct rdma_conn *rc);
void tgt_rdma_free(struct tgt_conn *c);

#endif /* RBLK_TARGET_RDMA_INT_H */
