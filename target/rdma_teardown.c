// SPDX-License-Identifier: MIT
/*
 * Target RDMA transport: the end of a connection.  A failure closes it;
 * the drain waits for every work request the device owns (send marker,
 * posted receives, bounded in time); once conn.c let go and no poll can
 * fire, the verbs objects are destroyed in order.  Calls neither rdma.c
 * nor rdma_poll.c (docs/rdma.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "rdma_int.h"

static void cancel_poll(struct rdma_conn *rc, struct tgt_event *ev)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(rc->c.r);

	io_uring_prep_poll_remove(sqe, (__u64)(uintptr_t)ev);
	io_uring_sqe_set_data(sqe, NULL);
}

/* Destroys rc once conn.c is done with it and no poll can fire any more. */
void tgt_rdma_maybe_destroy(struct rdma_conn *rc)
{
	if (!rc->freeing || rc->in_handler)
		return;
	/* The verbs objects go now: nothing uses them once conn.c let go
	 * and no handler runs.  Only the struct waits for the cancelled
	 * polls' CQEs (which must not find it freed); a reactor that stops
	 * before they come back leaves just that memory behind. */
	if (!rc->destroyed)
		tgt_rdma_conn_release(rc);
	if (rc->cm_armed || rc->cq_armed || rc->tmo_armed)
		return;
	free(rc);
}

void tgt_rdma_fail(struct rdma_conn *rc, const char *why)
{
	if (!rc->failed) {
		rc->failed = true;
		rblk_warn("rdma: %s: %s", rc->c.peer, why);
	}
	tgt_conn_close(&rc->c, true, why);
}

/*
 * Drained = every WR the device owned came back: the send marker (posted
 * after the QP entered the error state, so it completes after everything
 * posted before it) and every posted receive (flushed by the transition;
 * Soft-RoCE never completes a receive posted to a user QP that is already
 * in error, so receives are counted rather than marked).  A bounded wait
 * covers a device that loses one of them.
 */
void tgt_rdma_check_drained(struct rdma_conn *rc, bool timed_out)
{
	if (rc->drained || (!timed_out && (!rc->send_drained || rc->rx_posted)))
		return;
	if (timed_out)
		rblk_warn("rdma: %s: drain timed out (send marker %s, %u receives out)",
			  rc->c.peer, rc->send_drained ? "back" : "missing",
			  rc->rx_posted);
	rc->drained = true;
	RBLK_DBG(RBLK_DBG_RDMA, "rdma: %s: drained", rc->c.peer);
	tgt_conn_put(&rc->c);	/* the transport's reference */
}

static void drain_send_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, drain_send_ev);

	rc->send_drained = true;
	tgt_rdma_check_drained(rc, false);
}

static void drain_tmo_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, drain_tmo_ev);

	rc->tmo_armed = false;
	if (!rc->freeing)
		tgt_rdma_check_drained(rc, true);
	tgt_rdma_maybe_destroy(rc);
}

void tgt_rdma_post_drain(struct rdma_conn *rc)
{
	struct ibv_send_wr swr = {
		.wr_id = (uintptr_t)&rc->drain_send_ev,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct io_uring_sqe *sqe;
	int ret;

	ret = rblk_rdma_post_send(rc->id->qp, &swr);
	if (ret) {
		rblk_warn("rdma: %s: cannot post the drain marker: %s",
			  rc->c.peer, strerror(-ret));
		rc->send_drained = true;
	}
	rc->drain_ts.tv_sec = 3;
	sqe = tgt_reactor_sqe(rc->c.r);
	io_uring_prep_timeout(sqe, &rc->drain_ts, 0, 0);
	tgt_sqe_set_event(sqe, &rc->drain_tmo_ev);
	rc->tmo_armed = true;
	tgt_rdma_check_drained(rc, false);
}

void tgt_rdma_free(struct tgt_conn *c)
{
	struct rdma_conn *rc = RC(c);

	RBLK_DBG(RBLK_DBG_RDMA, "rdma: %s: free (polls armed: cm %d cq %d)",
		 c->peer, rc->cm_armed, rc->cq_armed);
	rc->freeing = true;
	if (rc->cm_armed)
		cancel_poll(rc, &rc->cm_ev);
	/* A deferred spin turn comes back by itself. */
	if (rc->cq_armed && !rc->cq_spinning)
		cancel_poll(rc, &rc->cq_ev);
	if (rc->tmo_armed) {
		struct io_uring_sqe *sqe = tgt_reactor_sqe(c->r);

		io_uring_prep_timeout_remove(sqe, (__u64)(uintptr_t)&rc->drain_tmo_ev, 0);
		io_uring_sqe_set_data(sqe, NULL);
	}
	tgt_rdma_maybe_destroy(rc);
}

/* Any thread: the last reference (the listener's or a connection's)
 * frees the device's PD and MRs. */
void tgt_rdma_dev_put(struct rdma_dev *d)
{
	if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	for (unsigned i = 0; i < d->n_reactors; i++)
		rblk_rdma_mr_dereg(d->pool_mr[i]);
	rblk_rdma_pd_free(d->pd);
	free(d->pool_mr);
	free(d);
}

void tgt_rdma_cqs_destroy(struct rdma_conn *rc)
{
	/* ibv_destroy_cq waits until every event taken for it was acked;
	 * the pending ones are taken (and acked) here. */
	if (rc->cc)
		while (rblk_rdma_cq_ack_event(rc->cc, NULL) > 0)
			;
	rblk_rdma_cq_destroy(NULL, rc->scq);
	rblk_rdma_cq_destroy(rc->cc, rc->rcq);
	rc->cc = NULL;
	rc->scq = rc->rcq = NULL;
}

/* In the order nothing is freed while the device may still use it. */
void tgt_rdma_conn_release(struct rdma_conn *rc)
{
	rc->destroyed = true;
	if (rc->id && rc->id->qp) {
		if (!rc->disconnecting)
			rdma_disconnect(rc->id);
		rblk_rdma_qp_destroy(rc->id);
	}
	tgt_rdma_cqs_destroy(rc);
	rblk_rdma_mr_dereg(rc->mem_mr);
	rblk_rdma_mr_dereg(rc->ctl_mr);
	tgt_rdma_dev_put(rc->dev);
	rblk_rdma_id_destroy(rc->id);
	rblk_rdma_channel_destroy(rc->cm_ch);
	rc->mem_mr = NULL;
	rc->ctl_mr = NULL;
	rc->dev = NULL;
	rc->id = NULL;
	rc->cm_ch = NULL;
	free(rc->mem);
	free(rc->ctl_mem);
	free(rc->rx);
	free(rc->sgl);
	free(rc->wrs);
	free(rc->rsp_busy);
	rc->mem = NULL;
	rc->ctl_mem = NULL;
	rc->rx = NULL;
	rc->sgl = NULL;
	rc->wrs = NULL;
	rc->rsp_busy = NULL;
}

/* Main thread, before the connection is accepted. */
void tgt_rdma_teardown_init(struct rdma_conn *rc)
{
	rc->drain_send_ev.done = drain_send_done;
	rc->drain_tmo_ev.done = drain_tmo_done;
}
