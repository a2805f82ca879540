/* SPDX-License-Identifier: MIT */
/*
 * Thin wrappers over librdmacm and libibverbs shared by the target and the
 * client RDMA transports.  Their only jobs: turn the two libraries' error
 * conventions (ibverbs returns a positive errno, rdmacm returns -1 and sets
 * errno, some calls return NULL) into this project's 0/-errno in exactly one
 * place, and bundle the few fixed sequences both sides repeat (resolve,
 * create CQ + completion channel, wait for one CM event with a timeout).
 *
 * Nothing here knows the rblk protocol; the CM private data format lives in
 * rblk_proto.h / rdma_wire.c.
 */
#ifndef RBLK_PROTO_RDMA_VERBS_H
#define RBLK_PROTO_RDMA_VERBS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ibverbs: 0 or a positive errno (a few providers return -1 + errno). */
static inline int rblk_ibv_err(int ret)
{
	if (ret > 0)
		return -ret;
	if (ret < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* rdmacm and libc: 0 or -1 with errno set. */
static inline int rblk_cm_err(int ret)
{
	if (ret == 0)
		return 0;
	return errno ? -errno : -EIO;
}

/* ---- CM ids and events ------------------------------------------------- */

/*
 * Creates an event channel whose fd is non-blocking and close-on-exec (the
 * callers poll it: the target's main loop, the client's connect path).
 */
int rblk_rdma_channel_create(struct rdma_event_channel **chp);
void rblk_rdma_channel_destroy(struct rdma_event_channel *ch);

/* An RC (RDMA_PS_TCP) cm id on ch, with context ctx. */
int rblk_rdma_id_create(struct rdma_event_channel *ch, void *ctx,
			struct rdma_cm_id **idp);
/* Takes ownership of the id a CONNECT_REQUEST event created (it is
 * destroyed with rblk_rdma_id_destroy like the others). */
void rblk_rdma_id_adopt(struct rdma_cm_id *id);
/* Destroys id (its QP must be gone); NULL is a no-op. */
void rblk_rdma_id_destroy(struct rdma_cm_id *id);

/*
 * Takes the next event off ch, waiting up to timeout_ms (-1: forever,
 * 0: never).  Returns 0 with *evp set (ack it with rdma_ack_cm_event),
 * -ETIMEDOUT / -EAGAIN when nothing came, or -errno.
 */
int rblk_rdma_get_event(struct rdma_event_channel *ch, int timeout_ms,
			struct rdma_cm_event **evp);

/*
 * Waits for one event on ch that must be of type want.  Returns 0 with *evp
 * set on a match.  On another event *evp is set too (the caller inspects
 * and acks it) and the return value says what went wrong: -ECONNREFUSED
 * (REJECTED), -EHOSTUNREACH (ADDR/ROUTE_ERROR, UNREACHABLE), -ECONNRESET
 * (DISCONNECTED, DEVICE_REMOVAL), -EPROTO (anything else).  *evp is NULL
 * when no event came (-ETIMEDOUT or -errno).
 */
int rblk_rdma_wait_event(struct rdma_event_channel *ch,
			 enum rdma_cm_event_type want, int timeout_ms,
			 struct rdma_cm_event **evp);

/*
 * Resolves host:port into id's address and route (both CM steps, each
 * bounded by timeout_ms).  port NULL means default_port.  id must be on its
 * own channel with no other events expected meanwhile.
 */
int rblk_rdma_resolve(struct rdma_cm_id *id, const char *host,
		      const char *port, unsigned default_port, int timeout_ms);

/*
 * Binds id to host:port (host NULL or "" or "*": any address) and listens.
 */
int rblk_rdma_listen(struct rdma_cm_id *id, const char *host,
		     const char *port, unsigned default_port, int backlog);


/* ---- verbs resources --------------------------------------------------- */

int rblk_rdma_pd_alloc(struct ibv_context *ctx, struct ibv_pd **pdp);
/* NULL is a no-op; returns 0 or -errno (-EBUSY: MRs or QPs still use it). */
int rblk_rdma_pd_free(struct ibv_pd *pd);

/*
 * A completion channel (fd non-blocking, close-on-exec) and a CQ of cqe
 * entries bound to it, armed for the next completion.  With chp NULL the
 * CQ has no channel (polled only).  cq_ctx is stored in the CQ.  On
 * failure nothing is left behind.
 */
int rblk_rdma_cq_create(struct ibv_context *ctx, int cqe, void *cq_ctx,
			struct ibv_comp_channel **chp, struct ibv_cq **cqp);
/* A CQ of cqe entries bound to an existing channel ch, not armed (a
 * second CQ whose events share ch's fd).  0 or -errno. */
int rblk_rdma_cq_create_on(struct ibv_context *ctx, int cqe, void *cq_ctx,
			   struct ibv_comp_channel *ch, struct ibv_cq **cqp);
/* Destroys cq then ch (either may be NULL).  The caller has acked every
 * CQ event it took (or uses rblk_rdma_cq_rearm, which acks). */
void rblk_rdma_cq_destroy(struct ibv_comp_channel *ch, struct ibv_cq *cq);

/*
 * Consumes one completion-channel event if there is one, acks it and
 * re-arms the CQ.  Returns 1 when an event was consumed, 0 when none was
 * pending (the fd is non-blocking), or -errno.  After a 1 the caller must
 * poll the CQ until it is empty: completions that arrived before the re-arm
 * raise no new event.
 */
int rblk_rdma_cq_rearm(struct ibv_comp_channel *ch, struct ibv_cq *cq);

/* Requests an event for the next completion (0 or -errno). */
int rblk_rdma_cq_arm(struct ibv_cq *cq);

/*
 * Takes and acks one pending event from ch without re-arming (a poller
 * that spins next and arms only before it sleeps again, or one whose
 * channel serves two CQs).  1 when one was taken (*cqp, when not NULL,
 * is the CQ it was for), 0 when none was pending (the fd is
 * non-blocking), or -errno.
 */
int rblk_rdma_cq_ack_event(struct ibv_comp_channel *ch, struct ibv_cq **cqp);

/* ibv_poll_cq: count (>= 0) or -errno. */
static inline int rblk_rdma_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int ret = ibv_poll_cq(cq, n, wc);

	return ret >= 0 ? ret : -EIO;
}

struct rblk_rdma_qp_caps {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;		/* ignored with an SRQ */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;		/* wanted inline data; the device may lower */
};

/*
 * Creates an RC QP on id (rdma_create_qp) over pd with the given CQs (srq may
 * be NULL), signalling every send WR only when asked (sq_sig_all = 0).
 * caps is updated with what the device granted.  The QP's context is qp_ctx.
 */
int rblk_rdma_qp_create(struct rdma_cm_id *id, struct ibv_pd *pd,
			struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			struct ibv_srq *srq, void *qp_ctx,
			struct rblk_rdma_qp_caps *caps);
/* rdma_destroy_qp if id has one; NULL id is a no-op. */
void rblk_rdma_qp_destroy(struct rdma_cm_id *id);

/* Moves the QP to the error state so every posted WR flushes (drain). */
int rblk_rdma_qp_to_error(struct ibv_qp *qp);

int rblk_rdma_mr_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
		     struct ibv_mr **mrp);
/* NULL is a no-op; returns 0 or -errno. */
int rblk_rdma_mr_dereg(struct ibv_mr *mr);

static inline int rblk_rdma_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return rblk_ibv_err(ibv_post_send(qp, wr, &bad));
}

static inline int rblk_rdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad;

	return rblk_ibv_err(ibv_post_recv(qp, wr, &bad));
}

static inline int rblk_rdma_post_srq_recv(struct ibv_srq *srq,
					  struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad;

	return rblk_ibv_err(ibv_post_srq_recv(srq, wr, &bad));
}

/* Human-readable names (static strings). */
const char *rblk_rdma_wc_str(enum ibv_wc_status st);
const char *rblk_rdma_event_str(enum rdma_cm_event_type type);

/*
 * Counts of live verbs objects created through these wrappers in this
 * process (PDs, CQs, QPs, MRs, cm ids).  Tests compare them before and
 * after many connect/disconnect cycles to prove nothing leaks.
 */
struct rblk_rdma_counts {
	long pd, cq, qp, mr, id, channel;
};
void rblk_rdma_counts_get(struct rblk_rdma_counts *c);

#endif /* RBLK_PROTO_RDMA_VERBS_H */
